package mempool

import (
	"iter"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// Entry is a tx held by the mempool, its ticket (its admission number) and
// when it was admitted (Options.Now at the add); it keeps both across
// syncs and removals. Tickets strictly increase along a snapshot.
type Entry struct {
	Ticket   uint64
	Tx       *ledger.Tx
	Admitted time.Time
}

// Snapshot is the mempool's state at one moment: immutable, safe to share,
// and read without any lock.
//
// Its UTxO reads the ledger view of its tip; that view is released once a
// sync has replaced it, after which lookups that reach it fail (with the
// view's error). Hold a snapshot for what it is — the txs — not as a
// long-lived ledger view.
type Snapshot struct {
	lin    *lineage
	txs    []Entry // lin's entries at positions [0, len(txs))
	bytes  int
	inputs int // the txs' inputs, counted: what a rebuild's spent index is sized for
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

// OldestAdmitted is when the oldest tx held (the first in ticket order)
// was admitted: how long the head of the queue has waited. false if the
// snapshot is empty.
func (s *Snapshot) OldestAdmitted() (time.Time, bool) {
	if len(s.txs) == 0 {
		return time.Time{}, false
	}
	return s.txs[0].Admitted, true
}

// Has reports whether the snapshot holds the tx with this hash.
func (s *Snapshot) Has(txHash block.Hash) bool {
	_, ok := s.Lookup(txHash)
	return ok
}

// Lookup returns the entry of the tx with this hash.
func (s *Snapshot) Lookup(txHash block.Hash) (Entry, bool) {
	return s.at(s.lin.hashPos(s.txs, txHash))
}

// LookupID returns the entry of the tx with this tx id (the hash of its
// body), the name users know a tx by. A snapshot holds at most one tx of
// an id: two txs with one body spend the same inputs.
func (s *Snapshot) LookupID(txID block.Hash) (Entry, bool) {
	return s.at(s.lin.idPos(s.txs, txID))
}

// at returns the entry at pos, an index's answer.
func (s *Snapshot) at(pos int, ok bool) (Entry, bool) {
	if !ok {
		return Entry{}, false
	}
	return s.txs[pos], true
}

// All yields the txs in ticket order.
func (s *Snapshot) All() iter.Seq[Entry] { return s.After(0) }

// After yields, in ticket order, the txs with a ticket greater than ticket:
// a tx-submission client's per-peer cursor walk.
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
func (s *Snapshot) UTxO() ledger.UTxO { return &lineageView{s.lin, s.txs} }

// lineage is what the snapshots between two syncs or removals share: the
// ledger view they were validated against and append-only indexes of their
// txs (tx hash, tx id and each output spent → position; posIndex). Only
// the newest snapshot of a lineage is extended (under the add lock once
// published; by the one sync or removal that builds it before), so an
// index entry at position ≥ a snapshot's length belongs to a later
// snapshot and is ignored. The index keeps no keys: an entry is confirmed
// against the tx at its position, in the reader's own snapshot.
//
// The outputs the txs create need no index: output i of the tx at position
// pos is TxIn{its id, i}, found through byID. Every entry is derived from
// the tx itself, so a sync that keeps a tx without reapplying it indexes
// it the same way.
type lineage struct {
	base   *baseView
	byHash posIndex
	byID   posIndex
	spent  posIndex
}

// hashPos is the position in txs, a prefix of the lineage's, of the tx
// with this hash.
func (l *lineage) hashPos(txs []Entry, h block.Hash) (int, bool) {
	return l.byHash.find(keyHash((*[32]byte)(&h), 0), len(txs), func(pos int) bool { return txs[pos].Tx.Hash() == h })
}

// idPos is the position in txs of the tx with this tx id.
func (l *lineage) idPos(txs []Entry, id [32]byte) (int, bool) {
	return l.byID.find(keyHash(&id, 0), len(txs), func(pos int) bool { return txs[pos].Tx.ID() == id })
}

// spentPos is the position in txs of the tx that spends in.
func (l *lineage) spentPos(txs []Entry, in ledger.TxIn) (int, bool) {
	return l.spent.find(keyHash(&in.TxID, in.Index), len(txs), func(pos int) bool { return slices.Contains(txs[pos].Tx.Inputs, in) })
}

// lineageView is the UTxO after txs, a prefix of a lineage's. Within a
// lineage every tx was valid after the ones before it, so an output is
// created at most once and spent at most once.
type lineageView struct {
	lin *lineage
	txs []Entry
}

func (v *lineageView) Lookup(in ledger.TxIn) (ledger.TxOut, bool, error) {
	if _, ok := v.lin.spentPos(v.txs, in); ok {
		return ledger.TxOut{}, false, nil
	}
	if pos, ok := v.lin.idPos(v.txs, in.TxID); ok {
		if outs := v.txs[pos].Tx.Outputs; int(in.Index) < len(outs) {
			return outs[in.Index], true, nil
		}
		return ledger.TxOut{}, false, nil // an index the tx never created
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
	lin    *lineage
	txs    []Entry
	bytes  int
	inputs int
	shared bool        // the lineage is published: readers may find in its indexes
	view   lineageView // utxo's answer, reused: a sync asks for it per tx
}

// newBuilder starts a lineage on base, sized for about txs txs spending
// about inputs outputs (the first table of each index; beyond, the index
// grows).
func newBuilder(base *baseView, txs, inputs int) *builder {
	lin := &lineage{base: base}
	lin.byHash.reserve(txs)
	lin.byID.reserve(txs)
	lin.spent.reserve(inputs)
	return &builder{lin: lin, txs: make([]Entry, 0, txs)}
}

// rebuilding is newBuilder sized to take s's txs and as many adds again as
// a quarter of them (the adds until the next sync).
func rebuilding(base *baseView, s *Snapshot) *builder {
	grow := func(n int) int { return n + n/4 + minTableSlots/2 }
	return newBuilder(base, grow(len(s.txs)), grow(s.inputs))
}

// extending continues s, which must be the newest snapshot of its lineage.
func extending(s *Snapshot) *builder {
	return &builder{lin: s.lin, txs: s.txs, bytes: s.bytes, inputs: s.inputs, shared: true}
}

// utxo is the ledger state after the builder's txs, valid until the next
// add.
func (b *builder) utxo() ledger.UTxO {
	b.view = lineageView{b.lin, b.txs}
	return &b.view
}

// add appends e, which must be valid after the builder's txs. Its index
// entries come from the tx itself (what ledger.Apply's diff records: its
// inputs spent, its outputs created under its id), and are written before
// the tx is visible in any snapshot.
func (b *builder) add(e Entry) {
	pos, tx := len(b.txs), e.Tx
	h, id := tx.Hash(), tx.ID()
	b.lin.byHash.store(keyHash(&h, 0), pos, b.shared)
	b.lin.byID.store(keyHash(&id, 0), pos, b.shared)
	for i := range tx.Inputs {
		b.lin.spent.store(keyHash(&tx.Inputs[i].TxID, tx.Inputs[i].Index), pos, b.shared)
	}
	b.txs = append(b.txs, e)
	b.bytes += e.Tx.Size()
	b.inputs += len(e.Tx.Inputs)
}

func (b *builder) snapshot() *Snapshot {
	return &Snapshot{lin: b.lin, txs: b.txs, bytes: b.bytes, inputs: b.inputs}
}

// after returns the entries with a ticket greater than ticket.
func (s *Snapshot) after(ticket uint64) []Entry {
	from := sort.Search(len(s.txs), func(i int) bool { return s.txs[i].Ticket > ticket })
	return s.txs[from:]
}
