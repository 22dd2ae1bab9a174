package network

import (
	"context"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// serveBudget bounds the bytes the host's servers send, per peer and in
// total (HostOptions.ServeBytesPerPeer, ServeBytesTotal): a served frame
// waits for its bytes from its peer's budget, then from the total. A peer's
// streams share its budget, so opening more of them buys nothing, and
// peers that pull all they can (a new identity is free) share the total.
//
// It also bounds the bytes the servers hold for their answers
// (HostOptions.ServeBytesHeld): a server takes an answer's bytes from it
// before it reads them from its store and gives them back once they are
// written (protocol.Session.Hold), so answers nobody reads hold that much
// memory at most, however many peers ask for them. A session holds at
// most one answer (its server answers one request at a time), and one
// frame in flight (the write deadline).
type serveBudget struct {
	perPeer int
	total   *rate.Limiter
	waited  *prometheus.CounterVec // scope: "peer", "total", "held"
	open    *prometheus.GaugeVec   // protocol

	heldMax   int
	held      *semaphore.Weighted // of heldMax bytes
	heldBytes prometheus.Gauge

	mu    sync.Mutex // guards peers; held for a map update only
	peers map[peer.ID]*peerBudget
}

// peerBudget is one peer's budget, kept while it has a stream served.
type peerBudget struct {
	limiter *rate.Limiter
	streams int
}

func newServeBudget(perPeer, total, held int, m *metrics) *serveBudget {
	return &serveBudget{
		perPeer:   perPeer,
		total:     rate.NewLimiter(rate.Limit(total), total),
		waited:    m.serveWaited,
		open:      m.servedStreams,
		heldMax:   held,
		held:      semaphore.NewWeighted(int64(held)),
		heldBytes: m.serveHeld,
		peers:     make(map[peer.ID]*peerBudget),
	}
}

// acquire registers a served stream of protocol name to id: pace is its
// session's Config.Pace; release ends it.
func (b *serveBudget) acquire(id peer.ID, name string) (pace func(context.Context, int) error, release func()) {
	b.mu.Lock()
	pb := b.peers[id]
	if pb == nil {
		pb = &peerBudget{limiter: rate.NewLimiter(rate.Limit(b.perPeer), b.perPeer)}
		b.peers[id] = pb
	}
	pb.streams++
	b.mu.Unlock()
	b.open.WithLabelValues(name).Inc()
	pace = func(ctx context.Context, n int) error {
		// In pieces of at most a burst: a frame may be larger than a
		// second's budget.
		for n > 0 {
			piece := min(n, pb.limiter.Burst(), b.total.Burst())
			if err := b.wait(ctx, pb.limiter, piece, "peer"); err != nil {
				return err
			}
			if err := b.wait(ctx, b.total, piece, "total"); err != nil {
				return err
			}
			n -= piece
		}
		return nil
	}
	release = func() {
		b.open.WithLabelValues(name).Dec()
		b.mu.Lock()
		defer b.mu.Unlock()
		if pb.streams--; pb.streams == 0 {
			delete(b.peers, id)
		}
	}
	return pace, release
}

// wait takes n bytes, at most l's burst, from l, and counts the time it
// waited.
func (b *serveBudget) wait(ctx context.Context, l *rate.Limiter, n int, scope string) error {
	start := time.Now()
	if err := l.WaitN(ctx, n); err != nil {
		return err
	}
	if waited := time.Since(start); waited > 0 {
		b.waited.WithLabelValues(scope).Add(waited.Seconds())
	}
	return nil
}

// hold takes n bytes of the bound on what the servers hold, waiting until
// they are free, and returns their release (protocol.Config.Hold; release
// may be called more than once). More than the whole bound takes the
// whole bound: such an answer still goes, alone.
func (b *serveBudget) hold(ctx context.Context, n int) (release func(), err error) {
	n = min(n, b.heldMax)
	if !b.held.TryAcquire(int64(n)) {
		start := time.Now()
		if err := b.held.Acquire(ctx, int64(n)); err != nil {
			return nil, err
		}
		b.waited.WithLabelValues("held").Add(time.Since(start).Seconds())
	}
	b.heldBytes.Add(float64(n))
	var once sync.Once
	return func() {
		once.Do(func() {
			b.heldBytes.Sub(float64(n))
			b.held.Release(int64(n))
		})
	}, nil
}
