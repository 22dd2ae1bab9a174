package notify

import (
	"context"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Run turns the Store's events into offers until ctx ends: BodyStored
// into a block offer, ClosureComplete into a block-txs offer. It catches up
// from Store.Points when it starts and whenever the Store cut its
// subscription off (it lagged), so no offer is lost; offers are sent once
// per point. It returns nil when ctx ends, or the Store's error.
func (r *Relay) Run(ctx context.Context) error {
	if r.opts.Store == nil {
		<-ctx.Done()
		return nil
	}
	for {
		events, cancel := r.opts.Store.Subscribe()
		err := r.follow(ctx, events)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		r.log.Warn("LeiosDB subscription cut off; catching up")
	}
}

// follow catches up, then offers what events reports, until ctx ends or
// the subscription is cut off. Subscribing before reading Points leaves no
// gap; an overlap is deduplicated by the offer state.
func (r *Relay) follow(ctx context.Context, events <-chan leiosdb.Event) error {
	infos, err := r.opts.Store.Points(r.pruned.Load())
	if err != nil {
		return fmt.Errorf("notify: catching up with the LeiosDB: %w", err)
	}
	for _, info := range infos {
		if info.HasBody {
			r.offer(leiosdb.BodyStored, info.Point, info.EbSize)
		}
		if info.Complete() {
			r.offer(leiosdb.ClosureComplete, info.Point, info.EbSize)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-events:
			if !ok {
				return nil
			}
			if err := r.event(e); err != nil {
				return err
			}
		}
	}
}

func (r *Relay) event(e leiosdb.Event) error {
	info, ok, err := r.opts.Store.PointInfo(e.Point)
	if err != nil {
		return fmt.Errorf("notify: LeiosDB point %s: %w", e.Point, err)
	}
	if !ok || !info.HasBody {
		return nil // collected since: nothing to offer
	}
	r.offer(e.Kind, e.Point, info.EbSize)
	return nil
}

// offer records that the Store holds the body (BodyStored) or closure
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
