package chaindb

import (
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// LedgerView is the UTxO at one volatile point: a Pebble snapshot of the
// backing store plus the diffs from the immutable tip of that moment up to
// the point. It stays consistent while held, whatever is added or flushed
// meanwhile. Close it when done: it pins a Pebble snapshot.
type LedgerView struct {
	db    *DB
	point block.Point

	mu      sync.RWMutex               // guards snap against Close racing Lookup
	snap    *pebble.Snapshot           // nil once closed
	diffs   []*ledger.Diff             // oldest first; never mutated
	created []map[string][]ledger.TxIn // each diff's outputs by address; never mutated
	// root is the immutable tip the view was taken at: the backing store's
	// point, where diffs start. points[i] is the block whose diff is
	// diffs[i], so SpentSince can tell which diffs come after a point.
	root   block.Point
	points []block.Point
}

var _ ledger.UTxO = (*LedgerView)(nil)

// LedgerAt returns the UTxO after the block at p, which must be the
// immutable tip or a block of the selected chain after it; ErrNotFound
// otherwise.
func (db *DB) LedgerAt(p block.Point) (*LedgerView, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	n, ok := db.nodes[p.Hash]
	if !ok || !db.onSelected(n) || n.point() != p {
		return nil, fmt.Errorf("%w: %s is not a volatile point of the selected chain (immutable tip %s)", ErrNotFound, p, db.root.tip())
	}
	return db.newView(n), nil
}

// TipLedger returns the UTxO at the selected tip, and that tip.
func (db *DB) TipLedger() (*LedgerView, block.Tip) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	tip := db.tipNode()
	if db.closed {
		return &LedgerView{db: db, point: tip.point()}, tip.tip() // every Lookup fails with ErrClosed
	}
	return db.newView(tip), tip.tip()
}

// TipUTxO is TipLedger in the shape the mempool and the forge take, in
// ledger types: the view as a ledger.UTxO and its Close as the release. It
// never fails.
func (db *DB) TipUTxO() (ledger.UTxO, block.Tip, func(), error) {
	view, tip := db.TipLedger()
	return view, tip, view.Close, nil
}

// newView takes the snapshot and the diffs under mu (held by the caller), so
// they agree: no flush can fall between them.
func (db *DB) newView(n *node) *LedgerView {
	v := &LedgerView{db: db, point: n.point(), snap: db.store.NewSnapshot(), diffs: db.diffsThrough(n), created: db.createdThrough(n),
		root: db.root.point(), points: db.pointsThrough(n)}
	db.regMu.Lock()
	db.views[v] = struct{}{}
	db.regMu.Unlock()
	return v
}

// Point is the point the view is at.
func (v *LedgerView) Point() block.Point { return v.point }

// Lookup returns the unspent output at in as of the view's point.
func (v *LedgerView) Lookup(in ledger.TxIn) (ledger.TxOut, bool, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.snap == nil {
		return ledger.TxOut{}, false, ErrClosed
	}
	return ledger.Overlay{Base: backingStore{v.snap}, Diffs: v.diffs}.Lookup(in)
}

// SpentSince tells which outputs the blocks after p, up to the view's
// point, spent: for an output unspent at p, spent(in) reports whether it is
// spent at the view's point. It answers from the view's own diffs, so it
// agrees with Lookup whatever was added or flushed since the view was taken:
// a mempool's sync learns what a chain extension spent without racing a tip
// change.
//
// ok is false on a closed view, and when p is neither the view's immutable
// base nor one of the volatile points its diffs lead through: p is on
// another fork, or older than the view's immutable tip (flushed).
//
// For an output created after p the answer means nothing (a block that
// creates and spends an output records neither): ask Lookup for those.
// spent reads no storage, is safe for concurrent use, and costs one map
// probe per block after p.
func (v *LedgerView) SpentSince(p block.Point) (spent func(ledger.TxIn) bool, ok bool) {
	v.mu.RLock()
	closed := v.snap == nil
	v.mu.RUnlock()
	if closed {
		return nil, false
	}
	var after []*ledger.Diff
	if p == v.root {
		after = v.diffs
	} else {
		i := len(v.points) - 1 // newest first: a mempool asks about a recent tip
		for i >= 0 && v.points[i] != p {
			i--
		}
		if i < 0 {
			return nil, false
		}
		after = v.diffs[i+1:]
	}
	return func(in ledger.TxIn) bool {
		// An output unspent at p is in no later diff's inserts (a TxIn names
		// one output forever), so a delete of it is never cancelled.
		for _, d := range after {
			if _, ok := d.Deletes[in]; ok {
				return true
			}
		}
		return false
	}, true
}

// Close releases the view's snapshot. Lookups after Close fail with ErrClosed.
func (v *LedgerView) Close() {
	v.release()
	v.db.regMu.Lock()
	delete(v.db.views, v)
	v.db.regMu.Unlock()
}

func (v *LedgerView) release() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.snap != nil {
		v.snap.Close()
		v.snap = nil
	}
}

// backingStore reads the UTxO keyspace of a Pebble DB or snapshot.
type backingStore struct{ r reader }

func (s backingStore) Lookup(in ledger.TxIn) (ledger.TxOut, bool, error) {
	raw, ok, err := get(s.r, utxoKey(in))
	if err != nil || !ok {
		return ledger.TxOut{}, false, err
	}
	out, err := ledger.DecodeTxOut(raw)
	if err != nil {
		return ledger.TxOut{}, false, fmt.Errorf("chaindb: backing store at %s: %w", in, err)
	}
	return out, true, nil
}

// flushDiff writes d into the backing store part of b, and into its
// address index. Within a diff an output both deleted and inserted is
// present (ledger.Overlay reads inserts first), so deletes go first.
func flushDiff(b *pebble.Batch, d *ledger.Diff) {
	for in, spent := range d.Deletes {
		b.Delete(utxoKey(in), nil)
		unindexOutput(b, in, spent)
	}
	for in, out := range d.Inserts {
		b.Set(utxoKey(in), ledger.EncodeTxOut(out), nil)
		indexOutput(b, in, out)
	}
}
