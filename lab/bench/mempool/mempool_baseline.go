package mempool

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// singleLockMempool is the reference the double-buffered mempool is
// measured against: the pre-Leios design, one lock that is both the data
// cell and the writer lock. Adds, the resync (which revalidates every tx
// while holding it) and every reader take it, so a reader waits out a whole
// resync. Same rules, same costs, same capacity as the real one.
type singleLockMempool struct {
	opts mempool.Options // TipLedger, Apply, Reapply, Params, CapacityBytes

	mu         sync.Mutex // guards every field below
	view       ledger.UTxO
	tip        block.Tip
	txs        []mempool.Entry // appended in place; a reader's copy of the header sees a prefix
	bytes      int
	nextTicket uint64
	diff       *ledger.Diff // the UTxO after txs is view + diff
	held       map[block.Hash]*ledger.Tx
	roomCh     chan struct{} // closed when the byte total drops
}

func newSingleLockMempool(opts mempool.Options) (*singleLockMempool, error) {
	view, tip, _, err := opts.TipLedger()
	if err != nil {
		return nil, err
	}
	return &singleLockMempool{opts: opts, view: view, tip: tip, nextTicket: 1, diff: ledger.NewDiff(),
		held: map[block.Hash]*ledger.Tx{}, roomCh: make(chan struct{})}, nil
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
	m.txs = append(m.txs, mempool.Entry{Ticket: m.nextTicket, Tx: tx})
	m.nextTicket++
	m.bytes += tx.Size()
	m.held[h] = tx
	return nil, nil
}

// Txs is the forge's read: take the lock, copy the state out, walk it
// after.
func (m *singleLockMempool) Txs() iter.Seq[*ledger.Tx] {
	m.mu.Lock()
	txs := m.txs
	m.mu.Unlock()
	return func(yield func(*ledger.Tx) bool) {
		for _, e := range txs {
			if !yield(e.Tx) {
				return
			}
		}
	}
}

// TxsAfter and Lookup are a tx-submission walk's reads, each under the
// lock.
func (m *singleLockMempool) TxsAfter(dst []txsubmission.MempoolTx, after uint64, max int) []txsubmission.MempoolTx {
	m.mu.Lock()
	defer m.mu.Unlock()
	from := sort.Search(len(m.txs), func(i int) bool { return m.txs[i].Ticket > after })
	for _, e := range m.txs[from:min(from+max, len(m.txs))] {
		dst = append(dst, txsubmission.MempoolTx{Ticket: e.Ticket, Hash: e.Tx.Hash(), Bytes: e.Tx.Bytes(), Size: e.Tx.Size()})
	}
	return dst
}

func (m *singleLockMempool) Lookup(hash block.Hash) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tx, ok := m.held[hash]
	if !ok {
		return nil, false
	}
	return tx.Bytes(), true
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
	kept := make([]mempool.Entry, 0, len(m.txs))
	bytes := 0
	for _, e := range m.txs {
		d, err := m.opts.Reapply(m.opts.Params, utxo, tip.Point.Slot+1, e.Tx)
		if err != nil {
			delete(m.held, block.Hash(e.Tx.Hash()))
			continue
		}
		diff.Append(d)
		kept = append(kept, e)
		bytes += e.Tx.Size()
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
