package notify

import (
	"context"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// peerQueue is the FIFO of one served stream. items is guarded by the
// relay's mu.
type peerQueue struct {
	kind streamKind
	// peer is the peer served, so that no vote it sent is queued back to
	// it; empty when the session names none (a stream outside a host).
	peer  peer.ID
	items []protocol.Message
	ready chan struct{}           // cap 1: items grew
	stop  context.CancelCauseFunc // ends the peer's Serve; cheap, never blocks
}

// streamKind is what a served stream carries: every notification (the
// prototype's one stream) or one kind of them (each of the CIP's three).
type streamKind uint8

const (
	allNotifications streamKind = iota
	announcementsOnly
	offersOnly
	votesOnly
)

// takes reports whether a stream of kind k carries m.
func (k streamKind) takes(m protocol.Message) bool {
	switch m.(type) {
	case *MsgBlockAnnouncement:
		return k == allNotifications || k == announcementsOnly
	case *MsgBlockOffer, *MsgBlockTxsOffer:
		return k == allNotifications || k == offersOnly
	case *MsgVotes:
		return k == allNotifications || k == votesOnly
	}
	return false
}

// register adds a stream served on ctx whose FIFO starts with the current
// state of its kind, in slot order: each recent announcement, followed by
// the offers of its point at its first announcement, then the recent votes
// but those the peer is known to hold. stop ends the stream's Serve if the
// relay drops it.
func (r *Relay) register(ctx context.Context, stop context.CancelCauseFunc, kind streamKind) *peerQueue {
	q := &peerQueue{kind: kind, ready: make(chan struct{}, 1), stop: stop}
	if p := network.RemotePeer(ctx); p != nil {
		q.peer = p.ID
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	offered := make(map[block.Point]bool)
	for _, h := range r.recent {
		if m := (&MsgBlockAnnouncement{Header: h}); kind.takes(m) {
			q.items = append(q.items, m)
		}
		p, ok := pointOf(h)
		if !ok || offered[p] {
			continue
		}
		offered[p] = true
		if st := r.offers[p]; st != nil && kind.takes(&MsgBlockOffer{}) {
			q.items = append(q.items, offerMessages(p, st)...)
		}
	}
	if kind.takes(&MsgVotes{}) {
		r.appendVotes(q, r.sortedVotes(q.peer))
	}
	r.queues[q] = struct{}{}
	if len(q.items) > 0 {
		poke(q.ready)
	}
	return q
}

// unregister forgets a served peer whose session ended.
func (r *Relay) unregister(q *peerQueue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.queues, q)
	q.items = nil
}

// next waits for the peer's next notification.
func (r *Relay) next(ctx context.Context, q *peerQueue) (protocol.Message, error) {
	for {
		r.mu.Lock()
		if len(q.items) > 0 {
			m := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			r.mu.Unlock()
			return m, nil
		}
		r.mu.Unlock()
		select {
		case <-q.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// broadcast appends m to every FIFO that carries its kind. mu is held.
func (r *Relay) broadcast(m protocol.Message) {
	for q := range r.queues {
		if q.kind.takes(m) {
			r.push(q, m)
		}
	}
}

// push appends m to q, or drops q if it is full. mu is held.
func (r *Relay) push(q *peerQueue, m protocol.Message) {
	if len(q.items) >= r.opts.MaxQueue {
		r.drop(q)
		return
	}
	q.items = append(q.items, m)
	poke(q.ready)
}

// pushVotes appends votes to q, filling the vote batch at its tail first.
// mu is held.
func (r *Relay) pushVotes(q *peerQueue, votes []block.Vote) {
	if len(votes) == 0 || !q.kind.takes(&MsgVotes{}) {
		return
	}
	if len(q.items)+len(votes)/MaxVotesPerMessage >= r.opts.MaxQueue {
		r.drop(q)
		return
	}
	r.appendVotes(q, votes)
	poke(q.ready)
}

// appendVotes appends votes to q without a bound. Each queue owns its
// batches, so topping up the tail batch touches no other peer's. mu is held.
func (r *Relay) appendVotes(q *peerQueue, votes []block.Vote) {
	r.stats.queuedVotes.Add(uint64(len(votes)))
	for len(votes) > 0 {
		tail, ok := lastVotes(q)
		if !ok || len(tail.Votes) == MaxVotesPerMessage {
			tail = &MsgVotes{}
			q.items = append(q.items, tail)
		}
		n := min(len(votes), MaxVotesPerMessage-len(tail.Votes))
		tail.Votes = append(tail.Votes, votes[:n]...)
		votes = votes[n:]
	}
}

func lastVotes(q *peerQueue) (*MsgVotes, bool) {
	if len(q.items) == 0 {
		return nil, false
	}
	m, ok := q.items[len(q.items)-1].(*MsgVotes)
	return m, ok
}

// drop gives up on a peer whose FIFO is full: its session ends with
// ErrSlowPeer, and when it reconnects it catches up from the relay's state,
// which is bounded by the volatile window. mu is held.
func (r *Relay) drop(q *peerQueue) {
	delete(r.queues, q)
	q.items = nil
	q.stop(ErrSlowPeer)
	r.log.Warn("peer dropped: notification queue full", "max", r.opts.MaxQueue)
}

// poke signals c without blocking; a pending signal already says it.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
