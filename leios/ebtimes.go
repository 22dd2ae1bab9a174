package leios

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// ebEntry is one EB's record in the log: its way through this node as
// GET /api/ebs gives it (apitypes.EBTimes: the stage and vote vocabularies
// are the API's), and the announcing RB's hash, for counting votes and
// finding it on the chain.
type ebEntry struct {
	apitypes.EBTimes
	rb block.Hash // RbHash
}

// maxEBTimes bounds the EBs remembered.
const maxEBTimes = 4096

// missedLookback is how many of the EBs seen last missedInARow judges.
const missedLookback = 64

// ebLog remembers EBTimes for the most recent EBs, counts first-held
// bodies and closures, and observes each closure's diffusion time.
type ebLog struct {
	clock     consensus.Clock
	window    uint64               // slots from an EB's slot to the end of its voting window
	horizon   time.Duration        // how long a verdict speaks for the node's lag (consensus.Timing.VerdictHorizon)
	diffusion prometheus.Histogram // slot start to complete closure

	mu               sync.Mutex // guards the fields below
	byPoint          map[block.Point]*ebEntry
	byRB             map[block.Hash]*ebEntry // the same entries, by announcing RB
	order            []block.Point           // insertion order, for eviction
	bodies, closures uint64
	changed          chan struct{} // closed and replaced when a body or a closure is recorded
}

func newEBLog(t consensus.Timing, clock consensus.Clock, reg prometheus.Registerer) (*ebLog, error) {
	l := &ebLog{
		clock:   clock,
		window:  t.VotingWindowSlots(),
		horizon: t.VerdictHorizon(),
		diffusion: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "leiosnode", Name: "eb_diffusion_seconds",
			Help:    "Time from an EB's slot start (when it was forged) to its complete closure here.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
		}),
		byPoint: make(map[block.Point]*ebEntry),
		byRB:    make(map[block.Hash]*ebEntry),
		changed: make(chan struct{}),
	}
	if reg != nil {
		if err := reg.Register(l.diffusion); err != nil {
			return nil, fmt.Errorf("leios: metrics: %w", err)
		}
	}
	return l, nil
}

// entry returns p's times, creating them. mu is held.
func (l *ebLog) entry(p block.Point) *ebEntry {
	e, ok := l.byPoint[p]
	if !ok {
		e = &ebEntry{EBTimes: apitypes.EBTimes{Slot: p.Slot, EbHash: p.Hash.String(), Deadline: l.clock.SlotStart(p.Slot + l.window)}}
		l.byPoint[p] = e
		l.order = append(l.order, p)
		if len(l.order) > maxEBTimes {
			if old := l.byPoint[l.order[0]]; old.rb != (block.Hash{}) {
				delete(l.byRB, old.rb)
			}
			delete(l.byPoint, l.order[0])
			l.order = l.order[1:]
		}
	}
	return e
}

// recordAnnounced notes the first announcement of p and reports whether
// it was the first.
func (l *ebLog) recordAnnounced(p block.Point, rbHash block.Hash, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(p)
	if e.Announced != nil {
		return false
	}
	e.Announced, e.RbHash, e.rb = &now, rbHash.String(), rbHash
	l.byRB[rbHash] = e
	return true
}

// recordSize notes the size of p's EB, from its body.
func (l *ebLog) recordSize(p block.Point, eb *block.EBBody) {
	closure := 0
	for _, tx := range eb.Txs {
		closure += int(tx.Size)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(p)
	e.Txs, e.ClosureBytes = len(eb.Txs), closure
}

// countVotes adds n votes relayed for the RB rbHash to its EB's count, which
// outlives the relay's pruning of the votes themselves.
func (l *ebLog) countVotes(rbHash block.Hash, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.byRB[rbHash]; e != nil {
		e.Votes += n
	}
}

// record notes a LeiosDB event the first time it is seen; a complete
// closure's diffusion time is observed then, from its slot start (when the
// EB was forged).
func (l *ebLog) record(ev leiosdb.Event, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(ev.Point)
	switch {
	case ev.Kind == leiosdb.BodyStored && e.Body == nil:
		e.Body = &now
		l.bodies++
		close(l.changed)
		l.changed = make(chan struct{})
	case ev.Kind == leiosdb.ClosureComplete && e.Closure == nil:
		e.Closure = &now
		l.closures++
		l.diffusion.Observe(now.Sub(l.clock.SlotStart(ev.Point.Slot)).Seconds())
		close(l.changed)
		l.changed = make(chan struct{})
	}
}

// recordValidated notes when this node's check of p's closure passed.
func (l *ebLog) recordValidated(p block.Point, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.entry(p); e.Validated == nil {
		e.Validated = &at
	}
}

// recordVote notes what became of this node's vote on p, and when.
func (l *ebLog) recordVote(p block.Point, outcome string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(p)
	e.Vote = outcome
	if outcome == forge.VoteCast && e.Voted == nil {
		e.Voted = &at
	}
}

// recordCertify notes a leader's look at p's votes.
func (l *ebLog) recordCertify(p block.Point, a forge.CertifyAttempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(p)
	e.Certify = &apitypes.CertifyAttempt{Slot: a.Slot, At: a.At, AtMs: l.sinceSlot(p.Slot, a.At), Votes: a.Votes, Outcome: a.Outcome}
}

func (l *ebLog) sinceSlot(slot uint64, t time.Time) int64 {
	return t.Sub(l.clock.SlotStart(slot)).Milliseconds()
}

// list is the log's entries, copies, oldest first, each with its stages
// in ms after its slot start.
func (l *ebLog) list() []ebEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ebEntry, 0, len(l.order))
	for _, p := range l.order {
		e := *l.byPoint[p]
		e.StageMs = apitypes.StageMs{Deadline: l.sinceSlot(e.Slot, e.Deadline)}
		for _, stage := range apitypes.Stages() {
			if t := *e.At(stage); t != nil {
				ms := l.sinceSlot(e.Slot, *t)
				*e.StageMs.At(stage) = &ms
			}
		}
		out = append(out, e)
	}
	return out
}

// windowVerdict is whether this node missed the voting window of the EB
// of an RB at slot.
type windowVerdict struct {
	slot   uint64
	missed bool
}

// verdicts judges the latest EBs whose voting window closed before now
// and within the verdict horizon, newest first: missed if this node did not hold and check their closures
// before the window closed. An EB it voted on was in time; one whose vote
// failed for a reason of the EB's own (an invalid closure, an
// equivocation, its RB no longer the tip) says nothing of the node's lag
// and is passed over; one without a vote outcome (a relay, or an RB that
// never was the tip here) was in time if its closure was held before the
// window closed.
func (l *ebLog) verdicts(now time.Time) []windowVerdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	var latest []windowVerdict
	// The EBs first seen last are the latest, give or take the order they
	// arrived in: judging the last few dozen is enough.
	for _, p := range l.order[max(0, len(l.order)-missedLookback):] {
		e := l.byPoint[p]
		if !e.Deadline.Before(now) {
			continue // its window is still open
		}
		if now.Sub(e.Deadline) > l.horizon {
			// Too old to say the node is behind now: with no EB since,
			// there is no work it could be behind on.
			continue
		}
		switch e.Vote {
		case forge.VoteCast:
			latest = append(latest, windowVerdict{e.Slot, false})
		case forge.VoteClosureIncomplete, forge.VoteTipAfterWindow:
			// Either way the node was behind the EB's window.
			latest = append(latest, windowVerdict{e.Slot, true})
		case "":
			latest = append(latest, windowVerdict{e.Slot, e.Closure == nil || e.Closure.After(e.Deadline)})
		}
	}
	slices.SortFunc(latest, func(a, b windowVerdict) int { return cmp.Compare(b.slot, a.slot) })
	return latest
}

// missedInARow counts the latest EBs, newest first, whose voting window
// this node missed (verdicts), stopping at the first it met.
func (l *ebLog) missedInARow(now time.Time) int {
	latest := l.verdicts(now)
	n := 0
	for n < len(latest) && latest[n].missed {
		n++
	}
	return n
}

func (l *ebLog) counts() (bodies, closures uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bodies, l.closures
}

// closureChanged returns a channel closed when the next body or closure is
// recorded held: a closure whose txs the mempool holds can be checked once
// its body is.
func (l *ebLog) closureChanged() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// awaitClosure waits until p's closure is recorded or ctx ends.
func (l *ebLog) awaitClosure(ctx context.Context, p block.Point) (time.Time, error) {
	for {
		l.mu.Lock()
		var at *time.Time
		if e := l.byPoint[p]; e != nil {
			at = e.Closure
		}
		changed := l.changed
		l.mu.Unlock()
		if at != nil {
			return *at, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-changed:
		}
	}
}
