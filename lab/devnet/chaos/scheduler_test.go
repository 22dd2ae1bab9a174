package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
)

// fakeClock is a clock whose After advances it at once: the scheduler,
// which alone uses it, runs through hours of faults in no time.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// fakeChaosTarget is a devnet of n nodes as the scheduler sees it: every
// action is logged with its time, and the polls show the faults — a killed
// or frozen node does not answer, a partition cuts the peers across it —
// and, once a fault has ended, the nodes apart until recoverIn later.
type fakeChaosTarget struct {
	t         *testing.T
	clock     *fakeClock
	start     time.Time
	n         int
	recoverIn time.Duration // how long the nodes take to rejoin after a fault
	never     bool          // they never do: two chains, forked deep
	leak      bool          // a partition lets one connection through

	actions   []string // "+10.0s kill 1"
	down      map[int]bool
	side      []int // the partition's side, nil when none
	recovered time.Time
	onAction  func(action string)
	// edgesShutFor: after a starvation, the nodes refuse txs this much
	// longer than they take to rejoin.
	edgesShutFor time.Duration
	edgesOpenAt  time.Time
	// missing are the certified closures each node whose LeiosDB was wiped
	// still lacks: refillPerPoll come back between two polls while the
	// node and one of its peers run.
	missing       map[int]int
	refillPerPoll int
	// attacked is the attack under way or called off last.
	attacked Kind
}

func newFakeChaosTarget(t *testing.T, n int, clock *fakeClock) *fakeChaosTarget {
	return &fakeChaosTarget{t: t, clock: clock, start: clock.now, n: n, recoverIn: 600 * time.Millisecond, down: map[int]bool{},
		missing: map[int]int{}, refillPerPoll: 2}
}

func (f *fakeChaosTarget) act(format string, args ...any) {
	action := fmt.Sprintf("%+.1fs ", f.clock.now.Sub(f.start).Seconds()) + fmt.Sprintf(format, args...)
	f.actions = append(f.actions, action)
	if f.onAction != nil {
		f.onAction(action)
	}
}

func (f *fakeChaosTarget) ended() { f.recovered = f.clock.now.Add(f.recoverIn) }

func (f *fakeChaosTarget) kill(i int) error   { f.act("kill %d", i); f.down[i] = true; return nil }
func (f *fakeChaosTarget) freeze(i int) error { f.act("freeze %d", i); f.down[i] = true; return nil }
func (f *fakeChaosTarget) restart(i int) error {
	f.act("restart %d", i)
	delete(f.down, i)
	f.ended()
	return nil
}
func (f *fakeChaosTarget) thaw(i int) error {
	f.act("thaw %d", i)
	delete(f.down, i)
	f.ended()
	return nil
}
func (f *fakeChaosTarget) heal() error { f.act("heal"); f.side = nil; f.ended(); return nil }

func (f *fakeChaosTarget) starve(nodes []int) error { f.act("starve %v", nodes); return nil }
func (f *fakeChaosTarget) feed() error {
	f.act("feed")
	f.ended()
	f.edgesOpenAt = f.recovered.Add(f.edgesShutFor)
	return nil
}

// fakeCertified is the CertRBs on every fake node's chain.
const fakeCertified = 10

func (f *fakeChaosTarget) wipeLeiosDB(i int) error {
	f.act("wipe %d", i)
	f.missing[i] = fakeCertified
	return nil
}

func (f *fakeChaosTarget) servedBlocks(_ context.Context, i int) (uint64, error) {
	if f.missing[i] > 0 {
		return 0, errors.New("503 certified closure not held yet")
	}
	return 20, nil
}

func (f *fakeChaosTarget) attack(kind Kind, i int) error {
	f.act("attack %s %d", kind, i)
	f.attacked = kind
	return nil
}
func (f *fakeChaosTarget) callOff() error {
	f.act("call off")
	f.ended()
	return nil
}
func (f *fakeChaosTarget) attackAccount() *AttackAccount {
	return &AttackAccount{Did: string(f.attacked), Counters: map[string]float64{}}
}

func (f *fakeChaosTarget) partition(side []int) error {
	f.act("partition %v", side)
	f.side = side
	return nil
}

func (f *fakeChaosTarget) poll(context.Context) []apiclient.StatusPoll {
	polls := make([]apiclient.StatusPoll, f.n)
	healthy := f.side == nil && len(f.down) == 0 && !f.never && !f.clock.now.Before(f.recovered)
	for i := range polls {
		if f.down[i] {
			polls[i] = apiclient.StatusPoll{Err: errors.New("connection refused")}
			continue
		}
		st := &apitypes.Status{Tip: apitypes.TipStatus{BlockNumber: 20, Hash: blockHash(20, "a")}}
		st.RecentBlocks = []apitypes.TipStatus{st.Tip, {BlockNumber: 19, Hash: blockHash(19, "a")}}
		st.ImmutableTip = apitypes.TipStatus{BlockNumber: 10, Hash: blockHash(10, "a")}
		if f.never && i == 0 {
			st.ImmutableTip.Hash = blockHash(10, "b")
		}
		inSide := slices.Contains(f.side, i)
		for j := range f.n {
			if j != i && !f.down[j] && (f.side == nil || inSide == slices.Contains(f.side, j) || f.leak) {
				st.Peers = append(st.Peers, apitypes.Peer{ID: fakePeerID(j)})
			}
		}
		if !healthy && i == 0 { // on a fork of its own
			st.Tip = apitypes.TipStatus{BlockNumber: 20, Hash: blockHash(20, "b")}
			st.RecentBlocks[0] = st.Tip
		}
		st.CertRBsOnChain = fakeCertified
		if m, wiped := f.missing[i]; wiped {
			st.Leios.CertifiedClosuresMissing = m
			if len(f.down) == 0 || len(f.down) < f.n-1 {
				f.missing[i] = max(0, m-f.refillPerPoll)
			}
		}
		st.Admission = &apitypes.AdmissionStatus{Admitting: true}
		if f.clock.now.Before(f.edgesOpenAt) {
			st.Admission = &apitypes.AdmissionStatus{Reason: "leios-behind", Detail: "the voting windows of the last 2 EBs closed first"}
		}
		polls[i] = apiclient.StatusPoll{Status: st}
	}
	return polls
}

func (f *fakeChaosTarget) blockHash(_ context.Context, node int, number uint64) (string, error) {
	if f.never && node == 0 {
		return blockHash(number, "b"), nil
	}
	return blockHash(number, "a"), nil
}

func fakePeerID(i int) string { return fmt.Sprintf("12D3KooFake%d", i) }

// fakeScheduler is a scheduler of spec over a fake devnet of n nodes, its
// run ending at end after the system start (0: no end).
func fakeScheduler(t *testing.T, spec string, n int, seed uint64, end time.Duration) (*Scheduler, *fakeChaosTarget) {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	target := newFakeChaosTarget(t, n, clock)
	sched := &Scheduler{spec: s, target: target, clock: clock, start: clock.now, seed: seed}
	for i := range n {
		sched.names = append(sched.names, fmt.Sprintf("node-%d", i))
		sched.peers = append(sched.peers, fakePeerID(i))
	}
	if end > 0 {
		sched.end = clock.now.Add(end)
	}
	return sched, target
}

// TestChaosSchedulerSingleFaults: each fault at its time, ended after its
// length, recovered after the nodes' 600 ms (seen by the first poll after,
// 200 ms apart), and the faults never overlap.
func TestChaosSchedulerSingleFaults(t *testing.T) {
	// The freeze is due while the kill still lasts: it waits for the
	// recovery from it.
	s, target := fakeScheduler(t, "kill@10s:2s,freeze@11s:3s,partition@30s:4s", 3, 7, 0)
	s.Run(context.Background())
	kill, freeze, part := target.actions[0], target.actions[2], target.actions[4]
	want := []string{
		kill, "+12.0s restart " + kill[len("+10.0s kill "):],
		freeze, "+15.6s thaw " + freeze[len("+12.6s freeze "):],
		part, "+34.0s heal",
	}
	if !strings.HasPrefix(kill, "+10.0s kill ") || !strings.HasPrefix(freeze, "+12.6s freeze ") || !strings.HasPrefix(part, "+30.0s partition [") || !slices.Equal(target.actions, want) {
		t.Errorf("actions %q, want %q", target.actions, want)
	}
	if len(s.faults) != 3 || s.stopped != "" {
		t.Fatalf("%d faults, stopped %q", len(s.faults), s.stopped)
	}
	for i, f := range s.faults {
		if !f.Recovered || f.RejoinMs == nil || *f.RejoinMs != 600 || f.Problem != "" || f.CutShort || len(f.Leaks) != 0 {
			t.Errorf("fault %d: %+v, want recovered 600 ms after its end", i, f)
		}
	}
	if f := s.faults[0]; f.Kind != Kill || f.AtSeconds != 10 || f.LengthMs != 2000 || f.TipBefore == nil || f.TipAfter == nil {
		t.Errorf("the kill: %+v", f)
	}
	if f := s.faults[2]; f.Kind != Partition || len(f.Nodes) != 1 || f.LengthMs != 4000 {
		t.Errorf("the partition: %+v", f)
	}
}

// TestChaosSchedulerAttacks: attack faults strike one node each, one
// after the other, last their length, are called off, and each keeps its
// account.
func TestChaosSchedulerAttacks(t *testing.T) {
	s, target := fakeScheduler(t, "http-unread@10s:20s,fetch-unread@15s:30s", 3, 7, 0)
	s.Run(context.Background())
	if len(target.actions) != 4 || !strings.HasPrefix(target.actions[0], "+10.0s attack http-unread ") ||
		target.actions[1] != "+30.0s call off" || !strings.HasPrefix(target.actions[2], "+30.6s attack fetch-unread ") ||
		target.actions[3] != "+60.6s call off" {
		t.Fatalf("actions %q", target.actions)
	}
	if len(s.faults) != 2 {
		t.Fatalf("%d faults, stopped %q", len(s.faults), s.stopped)
	}
	for i, kind := range []Kind{HTTPUnread, FetchUnread} {
		f := s.faults[i]
		if f.Kind != kind || len(f.Nodes) != 1 || !f.Recovered || f.Attack == nil || f.Attack.Did != string(kind) {
			t.Errorf("fault %d: %+v, want the %s recovered with its account", i, f, kind)
		}
	}
}

// TestChaosSchedulerStarve: a starvation stops every node, and the nodes
// have recovered only once they are on one chain and every edge takes txs
// in again: here 5 s after they rejoined.
func TestChaosSchedulerStarve(t *testing.T) {
	s, target := fakeScheduler(t, "starve@10s:30s", 3, 7, 0)
	target.edgesShutFor = 5 * time.Second
	s.Run(context.Background())
	if want := []string{"+10.0s starve [0 1 2]", "+40.0s feed"}; !slices.Equal(target.actions, want) {
		t.Errorf("actions %q, want %q", target.actions, want)
	}
	if len(s.faults) != 1 || s.stopped != "" {
		t.Fatalf("%d faults, stopped %q", len(s.faults), s.stopped)
	}
	if f := s.faults[0]; f.Kind != Starve || len(f.Nodes) != 3 || !f.Recovered || f.RejoinMs == nil || *f.RejoinMs != 5600 {
		t.Errorf("the starvation: %+v, want recovered 5.6 s after its end", f)
	}
}

// TestChaosSchedulerRefill: the victim is killed and its LeiosDB wiped,
// restarted after the fault's length; once half of its certified closures
// are back one of its peers is stopped, and started again once the victim
// holds them all and serves every block.
func TestChaosSchedulerRefill(t *testing.T) {
	s, target := fakeScheduler(t, "refill@10s:2s", 3, 7, 0)
	s.Run(context.Background())
	if len(target.actions) != 5 {
		t.Fatalf("actions %q", target.actions)
	}
	victim := target.actions[0][len("+10.0s kill "):]
	peer := target.actions[3][len(target.actions[3])-1:]
	want := []string{"+10.0s kill " + victim, "+10.0s wipe " + victim, "+12.0s restart " + victim, target.actions[3], target.actions[4]}
	if !slices.Equal(target.actions, want) || !strings.HasSuffix(target.actions[3], " kill "+peer) || !strings.HasSuffix(target.actions[4], " restart "+peer) || peer == victim {
		t.Errorf("actions %q", target.actions)
	}
	if len(s.faults) != 1 || s.stopped != "" {
		t.Fatalf("%d faults, stopped %q", len(s.faults), s.stopped)
	}
	f := s.faults[0]
	r := f.Refill
	if f.Kind != Refill || !f.Recovered || f.TipBefore == nil || f.TipAfter == nil || r == nil || r.Certified != fakeCertified || r.Missing != fakeCertified ||
		r.StoppedAtMissing == 0 || r.StoppedAtMissing > fakeCertified/2 || r.PeerStopped != "node-"+peer || r.RefilledMs == nil || r.BlocksServed != 20 {
		t.Errorf("the refill: %+v, account %+v", f, r)
	}
}

// TestChaosSchedulerRefillStalls: a victim that never gets its closures
// back stops the chaos mode, and the stopped peer is started again.
func TestChaosSchedulerRefillStalls(t *testing.T) {
	s, target := fakeScheduler(t, "refill@10s:2s", 3, 7, 0)
	target.refillPerPoll = 0
	s.Run(context.Background())
	if len(s.faults) != 1 || s.faults[0].Recovered || !strings.Contains(s.faults[0].Problem, "still lacks certified closures") || s.stopped == "" {
		t.Fatalf("faults %+v, stopped %q", s.faults, s.stopped)
	}
	if last := target.actions[len(target.actions)-1]; strings.Contains(last, "kill") {
		t.Errorf("the last action %q leaves a node down", last)
	}
}

// TestChaosSchedulerRepeating: repeating faults come at intervals of
// EVERY/2 to 3·EVERY/2 from the last one's start, none starts in the quiet
// end of the run, and a seed gives the same victims and times again.
func TestChaosSchedulerRepeating(t *testing.T) {
	run := func(seed uint64) ([]string, []Fault) {
		s, target := fakeScheduler(t, "kill=10s:1s,freeze=20s:2s,quiet=30s", 4, seed, 5*time.Minute)
		s.Run(context.Background())
		return target.actions, s.faults
	}
	actions, faults := run(42)
	kills, freezes := 0, 0
	var last = map[Kind]float64{}
	for _, f := range faults {
		if !f.Recovered {
			t.Errorf("%+v not recovered", f)
		}
		if f.AtSeconds > 270 {
			t.Errorf("a fault at %.1fs, in the last 30 s of a 5 min run", f.AtSeconds)
		}
		every := map[Kind]float64{Kill: 10, Freeze: 20}[f.Kind]
		gap := f.AtSeconds - last[f.Kind]
		// At least EVERY/2 after the last of its kind; at most 3·EVERY/2
		// plus the time a fault of the other kind held it up.
		if gap < every/2 || gap > 1.5*every+3 {
			t.Errorf("%s at %.1fs, %.1fs after the last one", f.Kind, f.AtSeconds, gap)
		}
		last[f.Kind] = f.AtSeconds
		switch f.Kind {
		case Kill:
			kills++
		case Freeze:
			freezes++
		}
	}
	// 270 s of faults: about 27 kills and 13 freezes, fewer for the waits.
	if kills < 15 || kills > 30 || freezes < 7 || freezes > 16 {
		t.Errorf("%d kills, %d freezes in 270 s", kills, freezes)
	}
	again, _ := run(42)
	if !slices.Equal(actions, again) {
		t.Errorf("the same seed gave other faults:\n%q\n%q", actions, again)
	}
	if other, _ := run(43); slices.Equal(actions, other) {
		t.Error("another seed gave the same faults")
	}
}

// TestChaosSchedulerNoRecovery: nodes that do not rejoin stop the chaos
// mode after the recovery timeout, with a fork deeper than k named.
func TestChaosSchedulerNoRecovery(t *testing.T) {
	s, target := fakeScheduler(t, "partition@10s:5s,kill@20s", 3, 1, 0)
	s.recoveryTimeout = 30 * time.Second
	target.never = true
	target.n = 3
	s.Run(context.Background())
	if len(s.faults) != 1 || len(target.actions) != 2 {
		t.Fatalf("faults %+v, actions %q: want the partition only", s.faults, target.actions)
	}
	f := s.faults[0]
	if f.Recovered || !strings.Contains(f.Problem, "not recovered 30s after the fault ended") || !strings.Contains(f.Problem, "forked deeper than k") {
		t.Errorf("problem %q", f.Problem)
	}
	if !strings.Contains(s.stopped, "did not recover from the partition") {
		t.Errorf("stopped %q", s.stopped)
	}
}

// TestChaosSchedulerCancel: a run that ends during a fault ends the fault.
func TestChaosSchedulerCancel(t *testing.T) {
	for _, kind := range []string{"kill", "freeze", "partition"} {
		s, target := fakeScheduler(t, kind+"@10s:1m,kill@2m", 3, 1, 0)
		ctx, cancel := context.WithCancel(context.Background())
		target.onAction = func(string) { cancel() } // the run ends as the fault strikes
		s.Run(ctx)
		if len(target.actions) != 2 || !regexp.MustCompile(`^\+10\.0s (restart|thaw|heal)`).MatchString(target.actions[1]) {
			t.Errorf("%s: actions %q, want the fault ended at once", kind, target.actions)
		}
		if len(s.faults) != 1 || !s.faults[0].CutShort || s.faults[0].Recovered {
			t.Errorf("%s: faults %+v", kind, s.faults)
		}
	}
}

// TestChaosSchedulerLeak: a partition that lets a connection through says
// so.
func TestChaosSchedulerLeak(t *testing.T) {
	s, target := fakeScheduler(t, "partition@10s", 3, 1, 0)
	target.leak = true
	s.Run(context.Background())
	if len(s.faults) != 1 || len(s.faults[0].Leaks) == 0 || !strings.Contains(s.faults[0].Leaks[0], "connected to") {
		t.Errorf("faults %+v, want a leak", s.faults)
	}
}

func TestMinoritySide(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 2; n <= 7; n++ {
		sizes := map[int]bool{}
		for range 200 {
			side := minoritySide(rng, n)
			if len(side) < 1 || len(side) > n/2 || !slices.IsSorted(side) || len(slices.Compact(slices.Clone(side))) != len(side) || side[len(side)-1] >= n {
				t.Fatalf("%d nodes: side %v", n, side)
			}
			sizes[len(side)] = true
		}
		if len(sizes) != n/2 {
			t.Errorf("%d nodes: side sizes %v, want 1 to %d", n, sizes, n/2)
		}
	}
}

func TestInAgreement(t *testing.T) {
	names := []string{"node-0", "node-1", "node-2"}
	node := func(tip uint64, fork string, peers int) apiclient.StatusPoll {
		st := &apitypes.Status{Tip: apitypes.TipStatus{BlockNumber: tip, Hash: blockHash(tip, fork)}}
		for n := tip; n > 0 && n+8 > tip; n-- {
			f := fork
			if n < tip {
				f = "a" // forks share everything below their tip
			}
			st.RecentBlocks = append(st.RecentBlocks, apitypes.TipStatus{BlockNumber: n, Hash: blockHash(n, f)})
		}
		for range peers {
			st.Peers = append(st.Peers, apitypes.Peer{ID: "p"})
		}
		return apiclient.StatusPoll{Status: st}
	}
	tests := []struct {
		name  string
		polls []apiclient.StatusPoll
		why   string // "" = in agreement
	}{
		{"one tip", []apiclient.StatusPoll{node(9, "a", 2), node(9, "a", 2), node(9, "a", 2)}, ""},
		{"a block behind", []apiclient.StatusPoll{node(9, "a", 2), node(8, "a", 2), node(9, "a", 2)}, ""},
		{"two blocks behind", []apiclient.StatusPoll{node(9, "a", 2), node(7, "a", 2), node(9, "a", 2)}, "node-1's tip #7 is 2 blocks below the highest, #9"},
		{"a fork at the tip", []apiclient.StatusPoll{node(9, "a", 2), node(9, "b", 2), node(9, "a", 2)}, "node-1's tip #9 b0000000 is not on the chain of the highest"},
		{"down", []apiclient.StatusPoll{node(9, "a", 2), down, node(9, "a", 2)}, "node-1 does not answer"},
		{"not connected", []apiclient.StatusPoll{node(9, "a", 2), node(9, "a", 1), node(9, "a", 2)}, "node-1 has 1 peers of 2"},
	}
	for _, tt := range tests {
		ok, why := inAgreement(names, tt.polls)
		if ok != (tt.why == "") || !strings.HasPrefix(why, tt.why) {
			t.Errorf("%s: %v %q, want %q", tt.name, ok, why, tt.why)
		}
	}
}
