package leios

import (
	"slices"
	"sync"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
)

// aheadWindow is how many certified closures ahead of the chain are
// fetched at a time (FetchAhead): the next one arrives while the chain
// applies the blocks before it. More would share the peers with the
// closure the chain waits for and have them all arrive late.
const aheadWindow = 2

// fetchAhead is the queue of FetchAhead: certified points ahead of the
// chain, the ones being fetched (live) and the ones waiting their turn, in
// the order chain sync brought them.
type fetchAhead struct {
	mu      sync.Mutex
	live    map[block.Point]struct{} // handed to the fetch logic, closure not complete yet
	waiting []aheadPoint
	queued  map[block.Point]struct{} // the points of waiting
}

type aheadPoint struct {
	point  block.Point
	parent *block.Header // announces the EB at point
}

func newFetchAhead() *fetchAhead {
	return &fetchAhead{live: make(map[block.Point]struct{}), queued: make(map[block.Point]struct{})}
}

// FetchAhead has the certified closure of blk, a block chain sync is about
// to add (parent is its predecessor's header), fetched before chain
// selection reaches it: a syncing node then fetches the closures of the
// CertRBs ahead while it applies the blocks before them, instead of
// parking at each CertRB for a whole fetch. At most aheadWindow such
// closures are fetched at a time, in the order chain sync brought them.
//
// The certificate is checked first: a place in the window must not go to
// a closure no peer holds.
func (p *Pipeline) FetchAhead(blk *block.Block, parent *block.Header) {
	pt, ok := consensus.CertifiedPoint(blk, parent)
	if !ok || p.ahead.has(pt) {
		return
	}
	if info, _, err := p.db.PointInfo(pt); err != nil || info.Complete() {
		return
	}
	if err := p.opts.Validator.ValidateCertification(blk, parent); err != nil {
		return // ApplyBlock refuses the block if the chain reaches it
	}
	if p.ahead.enqueue(aheadPoint{pt, parent}) {
		p.releaseAhead()
	}
}

// releaseAhead hands waiting points to the fetch logic while the window
// has room.
func (p *Pipeline) releaseAhead() {
	for {
		next, ok := p.ahead.next()
		if !ok {
			return
		}
		if err := p.fetchCertified(next.point, next.parent); err != nil {
			p.log.Warn("fetching a certified closure ahead", "point", next.point, "err", err)
			p.ahead.done(next.point)
			continue
		}
		// Complete already (its completion may have come before it was
		// live): it takes no place in the window.
		if info, _, err := p.db.PointInfo(next.point); err != nil || info.Complete() {
			p.ahead.done(next.point)
		}
	}
}

// has reports whether pt is live or waiting.
func (q *fetchAhead) has(pt block.Point) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.hasLocked(pt)
}

// hasLocked is has with mu held.
func (q *fetchAhead) hasLocked(pt block.Point) bool {
	_, live := q.live[pt]
	_, queued := q.queued[pt]
	return live || queued
}

// enqueue adds a point to the waiting ones; false if it is there already.
func (q *fetchAhead) enqueue(a aheadPoint) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.hasLocked(a.point) {
		return false
	}
	q.waiting = append(q.waiting, a)
	q.queued[a.point] = struct{}{}
	return true
}

// next makes the first waiting point live, if the window has room.
func (q *fetchAhead) next() (aheadPoint, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.live) >= aheadWindow || len(q.waiting) == 0 {
		return aheadPoint{}, false
	}
	a := q.waiting[0]
	q.waiting = q.waiting[1:]
	delete(q.queued, a.point)
	q.live[a.point] = struct{}{}
	return a, true
}

// done frees pt's place in the window: its closure is complete.
func (q *fetchAhead) done(pt block.Point) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.live, pt)
}

// prune forgets the points below slot, which the fetch logic forgot.
func (q *fetchAhead) prune(slot uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for pt := range q.live {
		if pt.Slot < slot {
			delete(q.live, pt)
		}
	}
	q.waiting = slices.DeleteFunc(q.waiting, func(a aheadPoint) bool { return a.point.Slot < slot })
	for pt := range q.queued {
		if pt.Slot < slot {
			delete(q.queued, pt)
		}
	}
}
