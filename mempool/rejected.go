package mempool

import "github.com/leiosnode/leiosnode/block"

// rejectedSet remembers the last capacity rejected tx hashes, so
// tx-submission does not request them again. Lookups take no lock (the
// membership map is an indexMap); remember is called only under the add
// lock, which guards ring and next.
type rejectedSet struct {
	members indexMap[block.Hash, struct{}]
	ring    []block.Hash // guarded by the add lock; insertion order, oldest at next once full
	next    int          // guarded by the add lock
	full    bool         // guarded by the add lock
}

func newRejectedSet(capacity int) *rejectedSet {
	return &rejectedSet{ring: make([]block.Hash, capacity)}
}

func (r *rejectedSet) has(h block.Hash) bool {
	_, ok := r.members.load(h)
	return ok
}

// remember adds h, forgetting the oldest hash when full. Called under the
// add lock.
func (r *rejectedSet) remember(h block.Hash) {
	if r.has(h) {
		return
	}
	if r.full {
		r.members.delete(r.ring[r.next])
	}
	r.ring[r.next] = h
	r.members.store(h, struct{}{})
	r.next++
	if r.next == len(r.ring) {
		r.next, r.full = 0, true
	}
}
