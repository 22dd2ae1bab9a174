package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/lab/hostile"
)

// The chaos scheduler's pace.
const (
	// chaosPollInterval is how often the scheduler polls every node while
	// a fault lasts and until the nodes have recovered from it.
	chaosPollInterval = 200 * time.Millisecond
	// chaosRecoveryTimeout is how long after a fault's end the scheduler
	// waits for the nodes to be connected and on one chain again; a fault
	// they have not recovered from by then stops the chaos mode.
	chaosRecoveryTimeout = 2 * time.Minute
)

// chaosTarget is what the scheduler acts on: the devnet's node processes,
// its link proxies and its nodes' APIs, or a fake in tests.
type chaosTarget interface {
	kill(node int) error    // SIGKILL, returning once the process is gone
	restart(node int) error // start it again with its command line
	freeze(node int) error  // SIGSTOP
	thaw(node int) error    // SIGCONT
	// starve runs the nodes a tenth of the time until feed.
	starve(nodes []int) error
	feed() error
	// partition cuts every link between side and the other nodes; heal
	// restores them all.
	partition(side []int) error
	heal() error
	// poll asks every node for its status at once.
	poll(ctx context.Context) []apiclient.StatusPoll
	// blockHash is the hash of block number on node's selected chain ("" if
	// it has no such block).
	blockHash(ctx context.Context, node int, number uint64) (string, error)
	// wipeLeiosDB deletes a stopped node's LeiosDB; servedBlocks walks its
	// /api/blocks to its tip and counts the blocks it answered.
	wipeLeiosDB(node int) error
	servedBlocks(ctx context.Context, node int) (uint64, error)
	// attack runs a hostile attack of kind on node until callOff, which
	// also samples the node's recovery; attackAccount then hands over
	// what the attack did and how the node answered.
	attack(kind Kind, node int) error
	callOff() error
	attackAccount() *AttackAccount
}

// chaosClock is the scheduler's time: the wall clock, or a fake one in
// tests.
type chaosClock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Scheduler injects the faults of a Spec into a running devnet,
// one at a time, and watches the nodes recover from each:
//
//   - Faults never overlap. A fault falls due at its time (a single one) or
//     at a random interval after the last of its kind started (a repeating
//     one); one that falls due while another lasts or the nodes are still
//     recovering waits for them, so that each recovery is that of one
//     fault.
//   - The victims come from a random source per kind, seeded from the
//     seed, so a seed gives each kind the same victims and intervals in the
//     same order; when a fault waited for another, the wall times shift.
//   - A fault has recovered when every node answers, is connected to every
//     other node, and every tip is on the chain of the highest one at most
//     a block below it. The time to rejoin runs from the fault's end (the
//     restart, the SIGCONT, the heal) to the first poll that shows it.
//   - A fault the nodes have not recovered from within
//     chaosRecoveryTimeout stops the chaos mode: what follows would not be
//     the recovery of one fault. The report says why.
//   - When ctx ends, a fault under way ends at once (the killed node
//     restarted, the frozen one thawed, the links restored).
type Scheduler struct {
	spec   Spec
	names  []string // node names, by index
	peers  []string // node peer IDs, by index
	target chaosTarget
	clock  chaosClock
	// start is the system start, from which @ times and first intervals
	// count; end is the end of the run (zero: none known).
	start, end time.Time
	seed       uint64
	// observe gets every round of polls, with the time it started (the
	// fork watch).
	observe func(at time.Time, polls []apiclient.StatusPoll)
	// say prints one line to the devnet's output.
	say func(format string, args ...any)

	pollInterval    time.Duration
	recoveryTimeout time.Duration

	// faults are the faults injected, in order; stopped says why the
	// scheduler stopped before the run's end. Both are written by run and
	// read once it has returned.
	faults  []Fault
	stopped string
}

// Fault is one fault the chaos mode injected, and the nodes' recovery.
type Fault struct {
	Kind Kind `json:"kind"`
	// Nodes are the node killed or frozen, or the side a partition cut off
	// from the rest.
	Nodes []string `json:"nodes"`
	// At is when it struck; AtSeconds the same, in seconds after the
	// system start.
	At        time.Time `json:"at"`
	AtSeconds float64   `json:"atSeconds"`
	// LengthMs is from the fault to its end: the restart of a killed node,
	// the SIGCONT of a frozen one, the heal of a partition.
	LengthMs int64 `json:"lengthMs"`
	// Recovered: every node answered, connected to all others, on one
	// chain (tips at most a block apart), RejoinMs after the fault's end.
	Recovered bool   `json:"recovered"`
	RejoinMs  *int64 `json:"rejoinMs,omitempty"`
	// TipBefore is the victim's tip at the last poll before it was killed,
	// TipAfter at the first one its new process answered (which may be
	// lower: blocks it had not written to disk yet).
	TipBefore *apitypes.TipStatus `json:"tipBefore,omitempty"`
	TipAfter  *apitypes.TipStatus `json:"tipAfter,omitempty"`
	// Leaks are the connections seen across a partition while it lasted:
	// a partition that held has none.
	Leaks []string `json:"leaks,omitempty"`
	// TxsDropped counts the admitted txs the firehose found dropped (in no
	// mempool and on no chain: see TxReport.DroppedByNodes) after this
	// fault struck and before the next one.
	TxsDropped uint64 `json:"txsDropped,omitempty"`
	// Refill is the refill fault's account.
	Refill *RefillAccount `json:"refill,omitempty"`
	// Attack is an attack fault's account.
	Attack *AttackAccount `json:"attack,omitempty"`
	// CutShort: the run ended during the fault, which ended then.
	CutShort bool `json:"cutShort,omitempty"`
	// Problem says why the nodes did not recover, or the fault could not be
	// injected.
	Problem string `json:"problem,omitempty"`
}

// Faults are the faults injected, in order; call it once Run has returned.
func (s *Scheduler) Faults() []Fault { return s.faults }

// Stopped says why the scheduler stopped before the run's end, "" if it
// did not; call it once Run has returned.
func (s *Scheduler) Stopped() string { return s.stopped }

// scheduled is one spec item's next strike.
type scheduled struct {
	item FaultSpec
	due  time.Time
}

func (s *Scheduler) defaults() {
	if s.clock == nil {
		s.clock = wallClock{}
	}
	if s.pollInterval <= 0 {
		s.pollInterval = chaosPollInterval
	}
	if s.recoveryTimeout <= 0 {
		s.recoveryTimeout = chaosRecoveryTimeout
	}
	if s.observe == nil {
		s.observe = func(time.Time, []apiclient.StatusPoll) {}
	}
	if s.say == nil {
		s.say = func(string, ...any) {}
	}
}

// run injects faults until ctx ends, no fault is left to strike, or the
// nodes did not recover from one.
func (s *Scheduler) Run(ctx context.Context) {
	s.defaults()
	rngs := map[Kind]*rand.Rand{}
	for i, kind := range Kinds {
		rngs[kind] = rand.New(rand.NewPCG(s.seed, uint64(i)))
	}
	var queue []*scheduled
	for _, item := range s.spec.Faults {
		due := s.start.Add(item.At)
		if item.Every > 0 {
			due = s.start.Add(interval(rngs[item.Kind], item.Every))
		}
		queue = append(queue, &scheduled{item: item, due: due})
	}
	for len(queue) > 0 {
		// The earliest due, the spec's order breaking ties.
		next := slices.MinFunc(queue, func(a, b *scheduled) int { return a.due.Compare(b.due) })
		if next.item.Every > 0 && !s.end.IsZero() && next.due.After(s.end.Add(-s.spec.Quiet)) {
			queue = slices.DeleteFunc(queue, func(q *scheduled) bool { return q == next })
			continue
		}
		if !s.sleepUntil(ctx, next.due) {
			return
		}
		struck := s.clock.Now()
		if !s.strike(ctx, next.item, rngs[next.item.Kind]) {
			return
		}
		if next.item.Every > 0 {
			next.due = struck.Add(interval(rngs[next.item.Kind], next.item.Every))
		} else {
			queue = slices.DeleteFunc(queue, func(q *scheduled) bool { return q == next })
		}
	}
}

// interval draws a repeating fault's interval: uniform in [every/2,
// 3·every/2), so every on average.
func interval(rng *rand.Rand, every time.Duration) time.Duration {
	return every/2 + time.Duration(rng.Int64N(int64(every)))
}

// sleepUntil waits until t, and says false if ctx ended first.
func (s *Scheduler) sleepUntil(ctx context.Context, t time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	d := t.Sub(s.clock.Now())
	if d <= 0 {
		return true
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.clock.After(d):
		return true
	}
}

// strike injects one fault, ends it after its length (or when ctx ends),
// and watches the nodes recover. It says false when the scheduler must
// stop: ctx ended, or the nodes did not recover.
func (s *Scheduler) strike(ctx context.Context, item FaultSpec, rng *rand.Rand) bool {
	var victims []int
	switch item.Kind {
	case Partition:
		victims = minoritySide(rng, len(s.names))
	case Starve:
		for i := range s.names {
			victims = append(victims, i)
		}
	default:
		victims = []int{rng.IntN(len(s.names))}
	}
	now := s.clock.Now()
	f := Fault{Kind: item.Kind, Nodes: s.nodeNames(victims), At: now, AtSeconds: now.Sub(s.start).Seconds()}
	who := strings.Join(f.Nodes, ", ")
	before := s.target.poll(ctx)
	s.observe(now, before)

	var err error
	switch item.Kind {
	case Kill:
		if st := before[victims[0]].Status; st != nil {
			f.TipBefore = &st.Tip
		}
		s.say("chaos %+.1fs: killing %s (SIGKILL); it restarts in %v", f.AtSeconds, who, item.Length)
		err = s.target.kill(victims[0])
	case Refill:
		f.Refill = &RefillAccount{}
		if st := before[victims[0]].Status; st != nil {
			f.TipBefore, f.Refill.Certified = &st.Tip, st.CertRBsOnChain
		}
		s.say("chaos %+.1fs: killing %s (SIGKILL) and deleting its LeiosDB (%d certified closures on its chain); it restarts in %v",
			f.AtSeconds, who, f.Refill.Certified, item.Length)
		if err = s.target.kill(victims[0]); err == nil {
			err = s.target.wipeLeiosDB(victims[0])
		}
	case Freeze:
		s.say("chaos %+.1fs: freezing %s (SIGSTOP) for %v", f.AtSeconds, who, item.Length)
		err = s.target.freeze(victims[0])
	case Partition:
		s.say("chaos %+.1fs: partition: %s cut off from the other nodes for %v", f.AtSeconds, who, item.Length)
		err = s.target.partition(victims)
	case Starve:
		s.say("chaos %+.1fs: starving every node (SIGSTOP 0.9 s, SIGCONT 0.1 s, over and over) for %v", f.AtSeconds, item.Length)
		err = s.target.starve(victims)
	default: // an attack
		// It samples its victim's memory without it first: the fault
		// starts when the attack does.
		err = s.target.attack(item.Kind, victims[0])
		now = s.clock.Now()
		f.At, f.AtSeconds = now, now.Sub(s.start).Seconds()
		s.say("chaos %+.1fs: %s on %s for %v: %s", f.AtSeconds, item.Kind, who, item.Length, hostile.Describe(hostile.Attack(item.Kind)))
	}
	if err != nil {
		f.Problem = "could not inject it: " + err.Error()
		s.faults = append(s.faults, f)
		s.stopped = fmt.Sprintf("the %s of %s failed: %v", item.Kind, who, err)
		s.say("chaos: %s; the chaos mode stops", s.stopped)
		return false
	}

	// The fault lasts; the polls meanwhile feed the fork watch and show
	// any connection across a partition.
	f.CutShort = s.watch(ctx, s.clock.Now().Add(item.Length), func(polls []apiclient.StatusPoll) {
		if item.Kind == Partition {
			f.Leaks = appendNew(f.Leaks, s.crossings(polls, victims)...)
		}
	}, nil) == watchCancelled
	switch item.Kind {
	case Kill, Refill:
		err = s.target.restart(victims[0])
	case Freeze:
		err = s.target.thaw(victims[0])
	case Partition:
		err = s.target.heal()
	case Starve:
		err = s.target.feed()
	default:
		err = s.target.callOff()
	}
	ended := s.clock.Now()
	f.LengthMs = ended.Sub(now).Milliseconds()
	// record keeps the fault; an attack's account waits for the sampling
	// of the node's recovery, which ran while the nodes were watched.
	record := func() {
		if isAttack(item.Kind) {
			f.Attack = s.target.attackAccount()
			s.say("chaos: the %s on %s: %s", item.Kind, who, f.Attack.Line())
		}
		s.faults = append(s.faults, f)
	}
	if err != nil {
		f.Problem = "could not end it: " + err.Error()
		record()
		s.stopped = fmt.Sprintf("ending the %s of %s failed: %v", item.Kind, who, err)
		s.say("chaos: %s; the chaos mode stops", s.stopped)
		return false
	}
	switch item.Kind {
	case Kill, Refill:
		s.say("chaos: %s restarted after %.1fs down", who, float64(f.LengthMs)/1000)
	case Freeze:
		s.say("chaos: %s thawed (SIGCONT) after %.1fs", who, float64(f.LengthMs)/1000)
	case Partition:
		s.say("chaos: partition healed after %.1fs", float64(f.LengthMs)/1000)
	case Starve:
		s.say("chaos: every node runs again after %.1fs starved", float64(f.LengthMs)/1000)
	default:
		s.say("chaos: the %s on %s called off after %.1fs", item.Kind, who, float64(f.LengthMs)/1000)
	}
	if f.CutShort {
		f.Problem = "the run ended during the fault"
		record()
		return false
	}

	// The recovery: a refill's victim first fetches what it lost.
	if item.Kind == Refill {
		if ok, why := s.watchRefill(ctx, &f, victims[0], ended); !ok {
			f.Problem = why
			record()
			if ctx.Err() == nil {
				s.stopped = fmt.Sprintf("%s did not refill its LeiosDB", who)
				s.say("chaos: %s; the chaos mode stops", why)
			}
			return false
		}
	}
	var why string
	end := s.watch(ctx, ended.Add(s.recoveryTimeout), func(polls []apiclient.StatusPoll) {
		if (item.Kind == Kill || item.Kind == Refill) && f.TipAfter == nil {
			if st := polls[victims[0]].Status; st != nil {
				f.TipAfter = &st.Tip
			}
		}
		var ok bool
		ok, why = inAgreement(s.names, polls)
		if ok && item.Kind == Starve {
			// Starved nodes must also take txs in again by themselves.
			ok, why = edgesOpen(s.names, polls)
		}
		if ok {
			rejoin := s.clock.Now().Sub(ended).Milliseconds()
			f.RejoinMs = &rejoin
		}
	}, func() bool { return f.RejoinMs != nil })
	switch end {
	case watchDone:
		f.Recovered = true
		state := "connected and on one chain"
		if item.Kind == Starve {
			state = "connected, on one chain and taking txs in"
		}
		s.say("chaos: every node %s %.1fs after the %s of %s ended", state, float64(*f.RejoinMs)/1000, item.Kind, who)
		record()
		return true
	case watchCancelled:
		f.Problem = "the run ended before the nodes recovered: " + why
		if fork := s.deepFork(context.WithoutCancel(ctx)); fork != "" {
			f.Problem += "; " + fork
		}
		record()
		return false
	}
	f.Problem = fmt.Sprintf("not recovered %v after the fault ended: %s", s.recoveryTimeout, why)
	if fork := s.deepFork(ctx); fork != "" {
		f.Problem += "; " + fork
	}
	record()
	s.stopped = fmt.Sprintf("the nodes did not recover from the %s of %s", item.Kind, who)
	s.say("chaos: %s: %s; the chaos mode stops", s.stopped, f.Problem)
	return false
}

// watchEnd is how a watch ended.
type watchEnd int

const (
	watchReached   watchEnd = iota // its time came
	watchDone                      // its done func said so
	watchCancelled                 // ctx ended
)

// watch polls the nodes every pollInterval until t, handing each round to
// each, unless done (when non-nil) says to stop sooner or ctx ends.
func (s *Scheduler) watch(ctx context.Context, until time.Time, each func([]apiclient.StatusPoll), done func() bool) watchEnd {
	for {
		if done != nil && done() {
			return watchDone
		}
		if ctx.Err() != nil {
			return watchCancelled
		}
		now := s.clock.Now()
		if !now.Before(until) {
			return watchReached
		}
		select {
		case <-ctx.Done():
			return watchCancelled
		case <-s.clock.After(min(s.pollInterval, until.Sub(now))):
		}
		at := s.clock.Now()
		polls := s.target.poll(ctx)
		if ctx.Err() != nil {
			return watchCancelled
		}
		s.observe(at, polls)
		each(polls)
	}
}

// edgesOpen says whether every node takes txs in through its API, and if
// not which one refuses and why.
func edgesOpen(names []string, polls []apiclient.StatusPoll) (bool, string) {
	for i, p := range polls {
		if a := p.Status.Admission; a != nil && !a.Admitting {
			return false, fmt.Sprintf("%s refuses txs (%s): %s", names[i], a.Reason, a.Detail)
		}
	}
	return true, ""
}

// crossings are the connections polls show between side and the others.
func (s *Scheduler) crossings(polls []apiclient.StatusPoll, side []int) []string {
	in := map[int]bool{}
	for _, n := range side {
		in[n] = true
	}
	var leaks []string
	for i, p := range polls {
		if p.Status == nil {
			continue
		}
		for _, peer := range p.Status.Peers {
			if j := slices.Index(s.peers, peer.ID); j >= 0 && in[i] != in[j] {
				leaks = append(leaks, fmt.Sprintf("%s connected to %s", s.names[i], s.names[j]))
			}
		}
	}
	return leaks
}

// deepFork looks for a node whose immutable block another node's chain
// does not hold: a fork deeper than k, which the nodes never resolve.
func (s *Scheduler) deepFork(ctx context.Context) string {
	polls := s.target.poll(ctx)
	for i, p := range polls {
		if p.Status == nil || p.Status.ImmutableTip.Hash == "" {
			continue
		}
		imm := p.Status.ImmutableTip
		for j, q := range polls {
			if j == i || q.Status == nil || q.Status.Tip.BlockNumber < imm.BlockNumber {
				continue
			}
			hash, err := s.target.blockHash(ctx, j, imm.BlockNumber)
			if err == nil && hash != imm.Hash {
				return fmt.Sprintf("%s's immutable block #%d %s is not on %s's chain: they forked deeper than k, and no node rolls back past its immutable tip, so they stay apart",
					s.names[i], imm.BlockNumber, apiclient.ShortHash(imm.Hash), s.names[j])
			}
		}
	}
	return ""
}

func (s *Scheduler) nodeNames(nodes []int) []string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = s.names[n]
	}
	return names
}

// minoritySide picks the side a partition cuts off: 1 to ⌊n/2⌋ of the n
// nodes, in index order.
func minoritySide(rng *rand.Rand, n int) []int {
	side := rng.Perm(n)[:1+rng.IntN(max(n/2, 1))]
	slices.Sort(side)
	return side
}

// appendNew appends the items not in list yet.
func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// inAgreement says whether the nodes have recovered from a fault: every
// node answered, is connected to every other one, and every tip is on the
// chain of the highest tip, at most one block below it (a block may be
// diffusing). If not, it says why.
func inAgreement(names []string, polls []apiclient.StatusPoll) (bool, string) {
	var high *apitypes.Status
	for i, p := range polls {
		switch st := p.Status; {
		case st == nil:
			return false, names[i] + " does not answer"
		case len(st.Peers) < len(polls)-1:
			return false, fmt.Sprintf("%s has %d peers of %d", names[i], len(st.Peers), len(polls)-1)
		case high == nil || st.Tip.BlockNumber > high.Tip.BlockNumber:
			high = st
		}
	}
	for i, p := range polls {
		tip := p.Status.Tip
		switch {
		case tip == high.Tip:
		case high.Tip.BlockNumber-tip.BlockNumber > 1:
			return false, fmt.Sprintf("%s's tip #%d is %d blocks below the highest, #%d", names[i], tip.BlockNumber, high.Tip.BlockNumber-tip.BlockNumber, high.Tip.BlockNumber)
		case !slices.Contains(high.RecentBlocks, tip):
			return false, fmt.Sprintf("%s's tip #%d %s is not on the chain of the highest tip #%d %s", names[i], tip.BlockNumber, apiclient.ShortHash(tip.Hash), high.Tip.BlockNumber, apiclient.ShortHash(high.Tip.Hash))
		}
	}
	return true, ""
}
