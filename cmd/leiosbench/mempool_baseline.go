package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// singleLockMempool is the reference the double-buffered mempool is
// measured against: the pre-Leios design, one lock that is both the data
// cell and the writer lock. Adds, the resync (which revalidates every tx
// while holding it) and every reader take it, so a reader waits out a whole
// resync. Same rules, same costs, same capacity as the real one.
type singleLockMempool struct {
	opts mempool.Options // TipLedger, Apply, Reapply, Params, CapacityBytes

	mu     sync.Mutex // guards every field below
	view   ledger.UTxO
	tip    block.Tip
	txs    []*ledger.Tx // appended in place; a reader's copy of the header sees a prefix
	bytes  int
	diff   *ledger.Diff // the UTxO after txs is view + diff
	held   map[block.Hash]struct{}
	roomCh chan struct{} // closed when the byte total drops
}

func newSingleLockMempool(opts mempool.Options) (*singleLockMempool, error) {
	view, tip, _, err := opts.TipLedger()
	if err != nil {
		return nil, err
	}
	return &singleLockMempool{opts: opts, view: view, tip: tip, diff: ledger.NewDiff(), held: map[block.Hash]struct{}{}, roomCh: make(chan struct{})}, nil
}

func (m *singleLockMempool) Add(ctx context.Context, tx *ledger.Tx) error {
	for {
		room, err := m.addLocked(tx)
		if room == nil {
			return err
		}
		select {
		case <-room:
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", mempool.ErrFull, ctx.Err())
		}
	}
}

func (m *singleLockMempool) addLocked(tx *ledger.Tx) (<-chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := block.Hash(tx.Hash())
	if _, dup := m.held[h]; dup {
		return nil, mempool.ErrDuplicate
	}
	if m.bytes+tx.Size() > m.opts.CapacityBytes {
		return m.roomCh, nil
	}
	d, err := m.opts.Apply(m.opts.Params, ledger.Overlay{Base: m.view, Diffs: []*ledger.Diff{m.diff}}, m.tip.Point.Slot+1, tx)
	if err != nil {
		return nil, err
	}
	m.diff.Append(d)
	m.txs = append(m.txs, tx)
	m.bytes += tx.Size()
	m.held[h] = struct{}{}
	return nil, nil
}

// Snapshot is what a reader does: take the lock, copy the state out.
func (m *singleLockMempool) Snapshot() []*ledger.Tx {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.txs
}

// Sync revalidates every tx against the new tip while holding the lock.
func (m *singleLockMempool) Sync() (held time.Duration, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	start := time.Now()
	view, tip, _, err := m.opts.TipLedger()
	if err != nil {
		return 0, err
	}
	diff := ledger.NewDiff()
	utxo := ledger.Overlay{Base: view, Diffs: []*ledger.Diff{diff}}
	kept := make([]*ledger.Tx, 0, len(m.txs))
	bytes := 0
	for _, tx := range m.txs {
		d, err := m.opts.Reapply(m.opts.Params, utxo, tip.Point.Slot+1, tx)
		if err != nil {
			delete(m.held, block.Hash(tx.Hash()))
			continue
		}
		diff.Append(d)
		kept = append(kept, tx)
		bytes += tx.Size()
	}
	if bytes < m.bytes {
		close(m.roomCh)
		m.roomCh = make(chan struct{})
	}
	m.view, m.tip, m.txs, m.bytes, m.diff = view, tip, kept, bytes, diff
	return time.Since(start), nil
}

func (m *singleLockMempool) occupancy() (txs, bytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.txs), m.bytes
}
