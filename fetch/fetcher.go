package fetch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Fetcher is the LeiosFetch side of one node: the decision logic, the
// loop that runs it, the per-peer clients that carry out its requests, and
// the server. It never writes a store: checked replies go to
// Options.Ingest (the pipeline's handlers), which store them and tell the
// Fetcher what is now held (events.go). Build it with New, run Run once,
// and give the host its NewService.
type Fetcher struct {
	opts   Options
	server *Server
	log    *slog.Logger

	// mu guards dec and clients; it is never held across I/O or while
	// calling Ingest.
	mu      sync.Mutex
	dec     *decisions
	clients map[peer.ID]*peerClient

	wake    chan struct{} // cap 1: the state changed, plan again
	fetched atomic.Uint64 // bytes of bodies and txs received and ingested
	// bodiesByPoint counts the bodies fetched one by one, blocksWhole the
	// EBs fetched whole by multi-block requests: which path a sync took.
	bodiesByPoint atomic.Uint64
	blocksWhole   atomic.Uint64
}

// peerClient is the queue of a live fetch client: requests planned for its
// peer, waiting to be sent. Its capacity is MaxRequestsPerPeer, which the
// decision logic never exceeds, so dispatch never blocks.
type peerClient struct{ queue chan *Request }

// New builds a Fetcher that knows nothing yet: the pipeline tells it what
// the LeiosDB holds (Announced, BodyHeld) before it runs.
func New(opts Options) (*Fetcher, error) {
	if opts.Store == nil || opts.Ingest == nil {
		return nil, errors.New("fetch: Options.Store and Options.Ingest are required")
	}
	opts = opts.withDefaults()
	f := &Fetcher{
		opts:    opts,
		log:     opts.Logger.With("component", "fetch"),
		dec:     newDecisions(opts),
		clients: make(map[peer.ID]*peerClient),
		wake:    make(chan struct{}, 1),
	}
	f.server = &Server{Store: opts.Store, Logger: f.log}
	return f, nil
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

// RunPeer carries out the decision logic's requests to peer id, pipelined,
// and ingests the checked replies, until ctx ends or a session fails. Its
// requests then fail and are re-planned. It opens a client session with
// open when it has a request to send, and ends it (done) once it has had
// nothing to ask for KeepAlive; the peer stays up meanwhile.
func (f *Fetcher) RunPeer(ctx context.Context, id peer.ID, open func(context.Context) (*protocol.Session, error)) error {
	return f.runPeer(ctx, id, false, open)
}

// runPeer is RunPeer toward a peer whose sessions speak /leios/fetch/2 if
// multiBlock.
func (f *Fetcher) runPeer(ctx context.Context, id peer.ID, multiBlock bool, open func(context.Context) (*protocol.Session, error)) error {
	pc := &peerClient{queue: make(chan *Request, f.opts.MaxRequestsPerPeer)}
	f.mu.Lock()
	f.clients[id] = pc
	f.mu.Unlock()
	f.peerUp(id, multiBlock)
	defer func() {
		f.mu.Lock()
		if f.clients[id] == pc {
			delete(f.clients, id)
		}
		f.mu.Unlock()
		f.PeerDown(id)
	}()
	for {
		var first *Request
		select {
		case <-ctx.Done():
			return ctx.Err()
		case first = <-pc.queue:
		}
		s, err := open(ctx)
		if err != nil {
			return err
		}
		err = f.runSession(ctx, s, pc, first)
		s.Close()
		if !errors.Is(err, errIdle) {
			return err
		}
	}
}

// errIdle ends a session that had nothing to ask for KeepAlive.
var errIdle = errors.New("fetch: nothing to ask; said done")

// runSession sends first and the requests that follow it over s, and
// ingests the replies, until s fails or has had nothing to ask for
// KeepAlive with nothing outstanding: then it says done (errIdle).
func (f *Fetcher) runSession(ctx context.Context, s *protocol.Session, pc *peerClient, first *Request) error {
	c := NewClient(s, f.opts.Limits)
	if err := c.Send(first); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	// saidDone is written by the sender, and read after g.Wait.
	saidDone := false
	g.Go(func() error { // sender
		idle := time.NewTimer(f.opts.KeepAlive)
		defer idle.Stop()
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case r := <-pc.queue:
				if err := c.Send(r); err != nil {
					return err
				}
			case <-idle.C:
				if c.Outstanding() == 0 {
					if err := c.Done(); err != nil {
						return err
					}
					saidDone = true
					return errIdle
				}
			}
			idle.Reset(f.opts.KeepAlive)
		}
	})
	g.Go(func() error { // receiver: replies come in request order
		for {
			r, reply, err := c.Next(ctx)
			if err != nil {
				return err
			}
			if err := f.Deliver(r, reply); err != nil {
				return s.Fail(err) // ends the session, so the sender stops too
			}
		}
	})
	err := g.Wait()
	if saidDone {
		// The server may close the stream on done before the sender
		// returns: the receiver's error then comes first, and says nothing.
		return errIdle
	}
	return err
}

// Stats is a snapshot of the fetch logic.
func (f *Fetcher) Stats() Stats {
	f.mu.Lock()
	s := f.dec.stats()
	f.mu.Unlock()
	s.FetchedBytes = f.fetched.Load()
	s.BodiesByPoint = f.bodiesByPoint.Load()
	s.BlocksWhole = f.blocksWhole.Load()
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
