package mempool

import (
	"iter"
	"sort"
	"sync"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// Entry is a tx held by the mempool and its ticket: its admission number,
// which it keeps across syncs. Tickets strictly increase along a snapshot.
type Entry struct {
	Ticket uint64
	Tx     *ledger.Tx
}

// Snapshot is the mempool's state at one moment: immutable, safe to share,
// and read without any lock.
//
// Its UTxO reads the ledger view of its tip; that view is released once a
// sync has replaced it, after which lookups that reach it fail (with the
// view's error). Hold a snapshot for what it is — the txs — not as a
// long-lived ledger view.
type Snapshot struct {
	lin   *lineage
	txs   []Entry // lin's entries at positions [0, len(txs))
	bytes int
}

// Tip is the tip the snapshot's txs were validated against.
func (s *Snapshot) Tip() block.Tip { return s.lin.base.tip }

// Len is the number of txs.
func (s *Snapshot) Len() int { return len(s.txs) }

// Bytes is the total size of the txs.
func (s *Snapshot) Bytes() int { return s.bytes }

// LastTicket is the ticket of the newest tx, 0 if the snapshot is empty
// (tickets start at 1).
func (s *Snapshot) LastTicket() uint64 {
	if len(s.txs) == 0 {
		return 0
	}
	return s.txs[len(s.txs)-1].Ticket
}

// Has reports whether the snapshot holds the tx with this hash.
func (s *Snapshot) Has(txHash block.Hash) bool {
	_, ok := s.Lookup(txHash)
	return ok
}

// Lookup returns the entry of the tx with this hash.
func (s *Snapshot) Lookup(txHash block.Hash) (Entry, bool) {
	return s.at(s.lin.byHash.load(txHash))
}

// LookupID returns the entry of the tx with this tx id (the hash of its
// body), the name users know a tx by. A snapshot holds at most one tx of
// an id: two txs with one body spend the same inputs.
func (s *Snapshot) LookupID(txID block.Hash) (Entry, bool) {
	return s.at(s.lin.byID.load(txID))
}

// at returns the entry at pos, an index's answer, if the snapshot holds it.
func (s *Snapshot) at(pos int, ok bool) (Entry, bool) {
	if !ok || pos >= len(s.txs) {
		return Entry{}, false
	}
	return s.txs[pos], true
}

// All yields the txs in ticket order.
func (s *Snapshot) All() iter.Seq[Entry] { return s.After(0) }

// After yields, in ticket order, the txs with a ticket greater than ticket:
// a tx-submission server's per-peer cursor walk.
func (s *Snapshot) After(ticket uint64) iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for _, e := range s.after(ticket) {
			if !yield(e) {
				return
			}
		}
	}
}

// LenAfter is the number of txs with a ticket greater than ticket: how
// many After yields.
func (s *Snapshot) LenAfter(ticket uint64) int { return len(s.after(ticket)) }

// UTxO is the ledger state after the snapshot's txs: the tip's UTxO with
// their outputs created and their inputs spent.
func (s *Snapshot) UTxO() ledger.UTxO { return lineageView{s.lin, len(s.txs)} }

// lineage is what the snapshots between two syncs or removals share: the
// ledger view they were validated against and append-only indexes of their
// txs (tx hash and tx id → position). Only the newest snapshot of a lineage
// is extended (under the add lock once published; by the one sync or
// removal that builds it before), so an index entry at position ≥ a
// snapshot's length belongs to a later snapshot and is ignored.
type lineage struct {
	base    *baseView
	byHash  indexMap[block.Hash, int]
	byID    indexMap[block.Hash, int]
	created indexMap[ledger.TxIn, createdOutput]
	spent   indexMap[ledger.TxIn, int]
}

// createdOutput is an output created by the tx at position pos.
type createdOutput struct {
	pos int
	out ledger.TxOut
}

// lineageView is the UTxO after the first n txs of a lineage. Within a
// lineage every tx was valid after the ones before it, so an output is
// created at most once and spent at most once.
type lineageView struct {
	lin *lineage
	n   int
}

func (v lineageView) Lookup(in ledger.TxIn) (ledger.TxOut, bool, error) {
	if pos, ok := v.lin.spent.load(in); ok && pos < v.n {
		return ledger.TxOut{}, false, nil
	}
	if c, ok := v.lin.created.load(in); ok && c.pos < v.n {
		return c.out, true, nil
	}
	return v.lin.base.utxo.Lookup(in)
}

// baseView is a ledger view at a tip, released once.
type baseView struct {
	utxo    ledger.UTxO
	tip     block.Tip
	release func()
	once    sync.Once
}

func (b *baseView) close() {
	b.once.Do(func() {
		if b.release != nil {
			b.release()
		}
	})
}

// builder extends the newest snapshot of a lineage. Its appends write the
// shared slice beyond every published snapshot's length, so they race with
// no reader.
type builder struct {
	lin   *lineage
	txs   []Entry
	bytes int
}

func newBuilder(base *baseView) *builder { return &builder{lin: &lineage{base: base}} }

// extending continues s, which must be the newest snapshot of its lineage.
func extending(s *Snapshot) *builder { return &builder{lin: s.lin, txs: s.txs, bytes: s.bytes} }

// utxo is the ledger state after the builder's txs.
func (b *builder) utxo() ledger.UTxO { return lineageView{b.lin, len(b.txs)} }

// add appends e, whose effect on the UTxO is d. The indexes are written
// before the tx is visible in any snapshot.
func (b *builder) add(e Entry, d *ledger.Diff) {
	pos := len(b.txs)
	b.lin.byHash.store(e.Tx.Hash(), pos)
	b.lin.byID.store(e.Tx.ID(), pos)
	for in := range d.Deletes {
		b.lin.spent.store(in, pos)
	}
	for in, out := range d.Inserts {
		b.lin.created.store(in, createdOutput{pos, out})
	}
	b.txs = append(b.txs, e)
	b.bytes += e.Tx.Size()
}

func (b *builder) snapshot() *Snapshot {
	return &Snapshot{lin: b.lin, txs: b.txs, bytes: b.bytes}
}

// after returns the entries with a ticket greater than ticket.
func (s *Snapshot) after(ticket uint64) []Entry {
	from := sort.Search(len(s.txs), func(i int) bool { return s.txs[i].Ticket > ticket })
	return s.txs[from:]
}
