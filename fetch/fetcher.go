package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/txcache"
)

// Fetcher is LeiosFetch for one node: the ingest handlers that peers' data
// and the forge go through (ingest.go), the decision logic, the loop that
// runs it, the per-peer clients that carry out its requests, and the
// server. Build it with New, run Run once, and add Service to the host.
type Fetcher struct {
	opts   Options
	db     *leiosdb.DB
	cache  *txcache.Cache
	spec   *protocol.Spec
	server *Server
	log    *slog.Logger

	// ingestMu serializes the handlers: each one's LeiosDB-then-cache
	// sequence runs whole, so the cache has one writer at a time and the
	// ordering contract holds between handlers. It is held across I/O.
	// Lock order: ingestMu, then mu.
	ingestMu sync.Mutex

	// mu guards dec and clients; it is never held across I/O.
	mu      sync.Mutex
	dec     *decisions
	clients map[peer.ID]*peerClient

	wake    chan struct{} // cap 1: the state changed, plan again
	fetched atomic.Uint64 // bytes of bodies and txs received and ingested
}

// peerClient is the queue of a live fetch client: requests planned for its
// peer, waiting to be sent. Its capacity is MaxRequestsPerPeer, which the
// decision logic never exceeds, so dispatch never blocks.
type peerClient struct{ queue chan *Request }

// New builds a Fetcher on opts.DB and opts.Cache and takes up what the
// LeiosDB already holds: known points, bodies, and missing txs.
func New(opts Options) (*Fetcher, error) {
	if opts.DB == nil || opts.Cache == nil {
		return nil, errors.New("fetch: Options.DB and Options.Cache are required")
	}
	opts = opts.withDefaults()
	f := &Fetcher{
		opts:    opts,
		db:      opts.DB,
		cache:   opts.Cache,
		spec:    Spec(opts.Limits),
		log:     opts.Logger.With("component", "fetch"),
		dec:     newDecisions(opts),
		clients: make(map[peer.ID]*peerClient),
		wake:    make(chan struct{}, 1),
	}
	f.server = &Server{Store: opts.DB, Logger: f.log}
	if err := f.restore(); err != nil {
		return nil, err
	}
	return f, nil
}

// restore learns the points the LeiosDB holds, so a restarted node goes on
// fetching what they miss.
func (f *Fetcher) restore() error {
	infos, err := f.db.Points(0)
	if err != nil {
		return fmt.Errorf("fetch: restore: %w", err)
	}
	for _, info := range infos {
		f.dec.announce(info.Point, info.EbSize)
		if info.HasBody && !f.dec.knowsBody(info.Point) {
			if err := f.loadBody(info.Point); err != nil {
				return fmt.Errorf("fetch: restore: %w", err)
			}
		}
	}
	return nil
}

// Run runs the decision loop until ctx ends: it plans whenever an offer,
// an arrival, a request's end, a prune or a peer coming or going changed
// the state (coalesced through one wake channel), and when a hedge falls
// due; never on a fixed timer.
func (f *Fetcher) Run(ctx context.Context) error {
	hedge := time.NewTimer(time.Hour)
	hedge.Stop()
	defer hedge.Stop()
	for {
		f.mu.Lock()
		now := f.opts.Now()
		reqs, next := f.dec.plan(now)
		f.dispatch(reqs)
		f.mu.Unlock()
		if !next.IsZero() {
			hedge.Reset(next.Sub(now))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.wake:
		case <-hedge.C:
		}
	}
}

// dispatch hands planned requests to their peers' clients. mu is held.
func (f *Fetcher) dispatch(reqs []*Request) {
	for _, r := range reqs {
		c := f.clients[r.Peer]
		if c != nil {
			select {
			case c.queue <- r:
				continue
			default:
			}
		}
		// No live client took it (a local race, not the peer's doing):
		// release it for the next plan.
		f.dec.complete(r.ID, true)
	}
}

// poke wakes the decision loop; a pending wake already says it.
func (f *Fetcher) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// RunPeer carries out the decision logic's requests to peer id over the
// client session s, pipelined, and ingests the checked replies, until ctx
// ends or the session fails. Its requests then fail and are re-planned.
func (f *Fetcher) RunPeer(ctx context.Context, id peer.ID, s *protocol.Session) error {
	c := NewClient(s, f.opts.Limits)
	pc := &peerClient{queue: make(chan *Request, f.opts.MaxRequestsPerPeer)}
	f.mu.Lock()
	f.clients[id] = pc
	f.dec.peerUp(id)
	f.mu.Unlock()
	f.poke()
	defer func() {
		f.mu.Lock()
		if f.clients[id] == pc {
			delete(f.clients, id)
		}
		f.dec.peerDown(id)
		f.mu.Unlock()
		f.poke()
	}()

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { // sender
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case r := <-pc.queue:
				if err := c.Send(r); err != nil {
					return err
				}
			}
		}
	})
	g.Go(func() error { // receiver: replies come in request order
		for {
			r, reply, err := c.Next(ctx)
			if err != nil {
				return err
			}
			ok, err := f.ingestReply(r, reply)
			f.mu.Lock()
			f.dec.complete(r.ID, ok)
			f.mu.Unlock()
			f.poke()
			if err != nil {
				return s.Fail(err) // ends the session, so the sender stops too
			}
		}
	})
	return g.Wait()
}

// ingestReply hands a checked reply to the handlers. ok is false only when
// the reply could not be stored for a local reason (err set).
func (f *Fetcher) ingestReply(r *Request, reply Reply) (ok bool, err error) {
	switch r.Kind {
	case RequestBody:
		err = f.insertBody(r.Point, reply.Body)
		switch {
		case errors.Is(err, leiosdb.ErrUnknownPoint):
			// Pruned while in flight: nothing to keep.
			err = nil
		case errors.Is(err, leiosdb.ErrTxSizeMismatch):
			// The EB itself is invalid; insertBody rejected its points.
			f.log.Warn("EB body declares a wrong tx size", "point", r.Point, "peer", r.Peer, "err", err)
			err = nil
		}
	case RequestTxs:
		err = f.Txs(r.Point, reply.Txs, false)
	}
	if err != nil {
		return false, err
	}
	f.fetched.Add(r.Bytes)
	return true, nil
}

// Stats is a snapshot of the fetch logic.
func (f *Fetcher) Stats() Stats {
	f.mu.Lock()
	s := f.dec.stats()
	f.mu.Unlock()
	s.FetchedBytes = f.fetched.Load()
	return s
}

// Missing lists the offsets of p's closure the decision logic still
// misses, ascending (nil if p is unknown or its body not held).
func (f *Fetcher) Missing(p block.Point) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	ps := f.dec.points[p]
	if ps == nil || ps.body == nil {
		return nil
	}
	var out []int
	for off, t := range ps.body.need {
		if t != nil {
			out = append(out, off)
		}
	}
	return out
}
