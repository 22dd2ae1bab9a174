package notify

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Offer records a LeiosDB event — BodyStored (the body of p is held,
// ebSize bytes) or ClosureComplete (its whole closure is) — and queues the
// matching offer to every peer, once per point and kind. The node feeds it
// from its LeiosDB follower (leiosdb.Follower); repeats are ignored.
func (r *Relay) Offer(kind leiosdb.EventKind, p block.Point, ebSize uint64) {
	r.offer(kind, p, ebSize)
}

// offer records that the LeiosDB holds the body (BodyStored) or closure
// (ClosureComplete) of p, and queues the offer to every peer if a header
// announcing p was accepted; otherwise it waits in the offer state for
// that header (accept sends it right behind the announcement).
func (r *Relay) offer(kind leiosdb.EventKind, p block.Point, ebSize uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.Slot < r.pruned.Load() {
		return
	}
	st := r.offers[p]
	if st == nil {
		st = &offerState{}
		r.offers[p] = st
	}
	var m protocol.Message
	switch kind {
	case leiosdb.BodyStored:
		if st.body {
			return
		}
		st.body, st.ebSize = true, ebSize
		m = &MsgBlockOffer{Point: p, EbSize: uint32(ebSize)} // ≤ 512 KiB: see offerMessages
	case leiosdb.ClosureComplete:
		if st.closure {
			return
		}
		st.closure = true
		m = &MsgBlockTxsOffer{Point: p}
	default:
		return
	}
	if _, announced := r.points[p]; announced {
		r.broadcast(m)
	}
}
