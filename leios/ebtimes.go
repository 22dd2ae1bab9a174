package leios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// EBTimes is when this node first held an EB's announcement, body and
// whole closure: GET /api/ebs, and the devnet report's diffusion times.
type EBTimes struct {
	Slot   uint64 `json:"slot"`
	EbHash string `json:"ebHash"`
	// RbHash is the announcing RB's, as first announced here.
	RbHash    string     `json:"rbHash,omitempty"`
	Announced *time.Time `json:"announced,omitempty"`
	Body      *time.Time `json:"body,omitempty"`
	Closure   *time.Time `json:"closure,omitempty"`
	// Vote is what became of this node's vote on the EB (forge.Vote*), if
	// it holds a committee seat; Votes counts the votes relayed here for
	// its RB.
	Vote  string `json:"vote,omitempty"`
	Votes int    `json:"votes"`

	rb block.Hash // RbHash, for counting votes
}

// maxEBTimes bounds the EBs remembered.
const maxEBTimes = 4096

// ebLog remembers EBTimes for the most recent EBs, counts first-held
// bodies and closures, and observes each closure's diffusion time.
type ebLog struct {
	clock     consensus.Clock
	diffusion prometheus.Histogram // slot start to complete closure

	mu               sync.Mutex // guards the fields below
	byPoint          map[block.Point]*EBTimes
	byRB             map[block.Hash]*EBTimes // the same entries, by announcing RB
	order            []block.Point           // insertion order, for eviction
	bodies, closures uint64
	changed          chan struct{} // closed and replaced when a closure is recorded
}

func newEBLog(clock consensus.Clock, reg prometheus.Registerer) (*ebLog, error) {
	l := &ebLog{
		clock: clock,
		diffusion: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "leiosnode", Name: "eb_diffusion_seconds",
			Help:    "Time from an EB's slot start (when it was forged) to its complete closure here.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
		}),
		byPoint: make(map[block.Point]*EBTimes),
		byRB:    make(map[block.Hash]*EBTimes),
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
func (l *ebLog) entry(p block.Point) *EBTimes {
	e, ok := l.byPoint[p]
	if !ok {
		e = &EBTimes{Slot: p.Slot, EbHash: p.Hash.String()}
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
	case ev.Kind == leiosdb.ClosureComplete && e.Closure == nil:
		e.Closure = &now
		l.closures++
		l.diffusion.Observe(now.Sub(l.clock.SlotStart(ev.Point.Slot)).Seconds())
		close(l.changed)
		l.changed = make(chan struct{})
	}
}

func (l *ebLog) list() []EBTimes {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]EBTimes, 0, len(l.order))
	for _, p := range l.order {
		out = append(out, *l.byPoint[p])
	}
	return out
}

func (l *ebLog) counts() (bodies, closures uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bodies, l.closures
}

// recordVote notes what became of this node's vote on p.
func (l *ebLog) recordVote(p block.Point, outcome string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entry(p).Vote = outcome
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
