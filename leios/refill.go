package leios

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/block"
)

// refillWindow is how many certified closures the refill has the fetch
// logic fetch at a time. Certified points go before every other point, so
// a refill of dozens at once would hold the peers' bandwidth from the
// live EBs this node must vote on for as long as it lasts; a few at a time
// leave them room and still keep every peer busy.
const refillWindow = 4

// refillMaxBackoff bounds, in RB intervals, how long the refill waits
// without progress before it asks the peers again.
const refillMaxBackoff = 8

// refill is the set of certified closures the selected chain applied that
// the LeiosDB lacked when the node started (deleted, or its newest WAL
// lost): queued in chain order, then asked of the fetch logic (live), until
// each is whole again. The points are kept (promoted) from the start, so no
// prune makes the fetch logic forget them.
type refill struct {
	mu     sync.Mutex
	queued []missingClosure // not asked yet, in chain order
	live   map[block.Point]missingClosure
	since  time.Time // when the refill started; zero when nothing is missing
	// progress is poked when a closure completes; 1-buffered, so a poke is
	// never lost and never blocks the LeiosDB follower.
	progress chan struct{}
}

func newRefill() *refill {
	return &refill{live: make(map[block.Point]missingClosure), progress: make(chan struct{}, 1)}
}

// RefillStatus says how many certified closures of the selected chain the
// LeiosDB still lacks, and since when the node has been fetching them.
type RefillStatus struct {
	Missing int
	Since   time.Time // zero when Missing is 0
	// RetryAfter is when to ask for such a closure again: one RB interval,
	// the refill's shortest wait between asking its peers.
	RetryAfter time.Duration
}

// Refill reports the refill's progress.
func (p *Pipeline) Refill() RefillStatus {
	r := p.refill
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.queued) + len(r.live)
	if n == 0 {
		return RefillStatus{}
	}
	return RefillStatus{Missing: n, Since: r.since, RetryAfter: p.opts.Validator.Timing().MeanRBInterval()}
}

// completed tells the refill that the closure of pt is whole.
func (r *refill) completed() {
	select {
	case r.progress <- struct{}{}:
	default:
	}
}

// startRefill finds the certified closures the LeiosDB lacks and keeps
// their points for good, before the first prune: a node that cannot serve
// the closures its own chain applied cannot serve a syncing peer either.
// It runs once, as the chain is attached, and returns how many there are;
// runRefill fetches them.
func (p *Pipeline) startRefill() (int, error) {
	missing, err := p.missingCertified()
	if err != nil || len(missing) == 0 {
		return 0, err
	}
	for _, m := range missing {
		if _, known, err := p.db.PointInfo(m.point); err != nil {
			return 0, err
		} else if !known {
			p.ingestAnnouncement(m.parent)
		}
		if err := p.db.Promote(m.point); err != nil {
			return 0, fmt.Errorf("leios: keeping the certified EB at %s: %w", m.point, err)
		}
	}
	p.refill.mu.Lock()
	p.refill.queued, p.refill.since = missing, p.opts.Now()
	p.refill.mu.Unlock()
	p.log.Warn("certified closures missing from the LeiosDB: fetching them from peers",
		"missing", len(missing), "first", missing[0].point, "last", missing[len(missing)-1].point)
	return len(missing), nil
}

// runRefill has the missing certified closures fetched, refillWindow at a
// time, from any live peer, until every one is whole. Without progress for
// a while it asks again — of every peer up by then — waiting one RB
// interval at first, twice as long each time after, up to
// refillMaxBackoff intervals; a completed closure resets the wait.
func (p *Pipeline) runRefill(ctx context.Context) error {
	base := p.opts.Validator.Timing().MeanRBInterval()
	wait := base
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		left, progressed, err := p.refillStep()
		if err != nil {
			return err
		}
		if left == 0 {
			p.refill.mu.Lock()
			since := p.refill.since
			p.refill.since = time.Time{}
			p.refill.mu.Unlock()
			p.log.Info("certified closures refilled: the LeiosDB holds every closure the chain applied",
				"took", p.opts.Now().Sub(since).Round(time.Millisecond))
			return nil
		}
		if progressed {
			wait = base
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-p.refill.progress:
		case <-timer.C:
			p.askRefillAgain(left, wait)
			wait = min(2*wait, refillMaxBackoff*base)
		}
	}
}

// refillStep drops the closures now whole and asks for the next ones while
// the window has room. It returns how many are still missing and whether
// any completed since the last step. The LeiosDB is read, and the fetch
// logic told, outside the refill's lock, which /status takes.
func (p *Pipeline) refillStep() (left int, progressed bool, err error) {
	r := p.refill
	r.mu.Lock()
	live := slices.Collect(maps.Keys(r.live))
	r.mu.Unlock()
	var whole []block.Point
	for _, pt := range live {
		info, _, err := p.db.PointInfo(pt)
		if err != nil {
			return 0, false, err
		}
		if info.Complete() {
			whole = append(whole, pt)
		}
	}
	// A point asked for that turns out whole already is dropped by the
	// next step: its completion, or the timer, wakes it.
	var ask []missingClosure
	r.mu.Lock()
	for _, pt := range whole {
		delete(r.live, pt)
	}
	for len(r.live) < refillWindow && len(r.queued) > 0 {
		m := r.queued[0]
		r.queued = r.queued[1:]
		r.live[m.point] = m
		ask = append(ask, m)
	}
	left = len(r.queued) + len(r.live)
	r.mu.Unlock()
	for _, m := range ask {
		p.certifyForRefill(m)
	}
	return left, len(whole) > 0, nil
}

// askRefillAgain asks for the live closures again after wait passed
// without one completing: the fetch logic plans them anew with the peers
// up now.
func (p *Pipeline) askRefillAgain(left int, wait time.Duration) {
	r := p.refill
	r.mu.Lock()
	live := slices.Collect(maps.Values(r.live))
	since := r.since
	r.mu.Unlock()
	for _, m := range live {
		p.certifyForRefill(m)
	}
	p.log.Warn("certified closures still missing from the LeiosDB: asking peers again",
		"missing", left, "since", since.Format(time.RFC3339), "waited", wait.Round(time.Millisecond))
}

// certifyForRefill has the fetch logic fetch m's closure first, from any
// live peer.
func (p *Pipeline) certifyForRefill(m missingClosure) {
	if !p.fetcher.Certified(m.point) {
		p.log.Warn("a certified closure to refill is unknown to the fetch logic", "point", m.point)
	}
}
