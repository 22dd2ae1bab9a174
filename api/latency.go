package api

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
)

// maxTracked bounds the submitted txs awaiting the chain; past it the
// oldest are forgotten (never observed).
const maxTracked = 1 << 20

// latencyTracker measures, for the txs submitted through this API, the time
// from their admission to the selected chain adopting the block that
// applied them (an RB's own txs, or a CertRB's certified closure).
type latencyTracker struct {
	hist prometheus.Histogram

	mu      sync.Mutex // guards pending and order
	pending map[block.Hash]time.Time
	order   []block.Hash // admission order, for the bound
}

func newLatencyTracker() *latencyTracker {
	return &latencyTracker{
		hist: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "leiosnode", Name: "submit_to_chain_seconds",
			Help:    "Time from a tx's admission through the submit API to the selected chain adopting the block that applied it.",
			Buckets: prometheus.ExponentialBuckets(0.1, 1.5, 16),
		}),
		pending: make(map[block.Hash]time.Time),
	}
}

// admitted notes a tx the submit API admitted.
func (t *latencyTracker) admitted(hash block.Hash, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.order) >= maxTracked {
		delete(t.pending, t.order[0])
		t.order = t.order[1:]
	}
	t.pending[hash] = at
	t.order = append(t.order, hash)
}

// applied observes the txs of a newly selected block.
func (t *latencyTracker) applied(hashes []block.Hash, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range hashes {
		if since, ok := t.pending[h]; ok {
			t.hist.Observe(at.Sub(since).Seconds())
			delete(t.pending, h)
		}
	}
	if len(t.pending) == 0 {
		t.order = t.order[:0]
	}
}

// follow observes the blocks the selected chain adopts until ctx ends.
func (s *Server) follow(ctx context.Context) error {
	chain := s.opts.Chain
	done := chain.Tip().BlockNumber
	for {
		changed := chain.TipChanged()
		tip := chain.Tip().BlockNumber
		done = min(done, tip) // a rollback: blocks past tip are another chain's
		var parent *block.Header
		for n := done + 1; n <= tip; n++ {
			blk, err := chain.BlockByNumber(n)
			if err != nil {
				break
			}
			if parent == nil && n > 1 {
				if p, err := chain.BlockByNumber(n - 1); err == nil {
					parent = p.Header
				}
			}
			s.latency.applied(s.appliedHashes(blk, parent), time.Now())
			parent, done = blk.Header, n
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

// appliedHashes are the hashes of the txs blk applied.
func (s *Server) appliedHashes(blk *block.Block, parent *block.Header) []block.Hash {
	var hashes []block.Hash
	if p, ok := consensus.CertifiedPoint(blk, parent); ok {
		if eb, held, err := s.opts.Leios.Body(p.Hash); err == nil && held {
			for _, e := range eb.Txs {
				hashes = append(hashes, e.TxHash)
			}
		}
	}
	for _, tx := range blk.Body.Txs {
		hashes = append(hashes, block.HashBytes(tx))
	}
	return hashes
}
