package ledger

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
)

// TxIn names a transaction output: `[tx_id, index]`.
type TxIn struct {
	_     struct{} `cbor:",toarray"`
	TxID  [32]byte
	Index uint32
}

// TxInKeySize is the length of TxIn.Key.
const TxInKeySize = 36

// Key is the fixed-width key of a TxIn in the backing store: the tx id then
// the index big-endian, so the keys of one tx sort together.
func (in TxIn) Key() [TxInKeySize]byte {
	var k [TxInKeySize]byte
	copy(k[:32], in.TxID[:])
	binary.BigEndian.PutUint32(k[32:], in.Index)
	return k
}

// TxInFromKey is the inverse of Key.
func TxInFromKey(k []byte) (TxIn, error) {
	if len(k) != TxInKeySize {
		return TxIn{}, fmt.Errorf("ledger: txin key of %d bytes", len(k))
	}
	var in TxIn
	copy(in.TxID[:], k[:32])
	in.Index = binary.BigEndian.Uint32(k[32:])
	return in, nil
}

func (in TxIn) String() string { return fmt.Sprintf("%s#%d", hex.EncodeToString(in.TxID[:]), in.Index) }

// TxOut is an unspent output: an address and an amount of lovelace.
type TxOut struct {
	Address []byte
	Coin    uint64
}

// EncodeTxOut is the backing store's value encoding of an output:
// the coin as 8 bytes big-endian, then the address bytes.
func EncodeTxOut(out TxOut) []byte {
	b := make([]byte, 8+len(out.Address))
	binary.BigEndian.PutUint64(b, out.Coin)
	copy(b[8:], out.Address)
	return b
}

// DecodeTxOut is the inverse of EncodeTxOut.
func DecodeTxOut(b []byte) (TxOut, error) {
	if len(b) < 8 {
		return TxOut{}, fmt.Errorf("ledger: txout value of %d bytes", len(b))
	}
	return TxOut{Coin: binary.BigEndian.Uint64(b), Address: append([]byte(nil), b[8:]...)}, nil
}

// UTxO is a read view of the unspent outputs. Views at volatile points are a
// backing store plus diffs (Overlay).
type UTxO interface {
	// Lookup returns the output at in, or ok=false if it is not unspent.
	Lookup(in TxIn) (out TxOut, ok bool, err error)
}

// Diff is the change a block (or a sequence of txs) makes to the UTxO set:
// outputs it created and outputs it spent, each with the output itself (as
// UTxO-HD's diffs keep the values they delete: the store that flushes a
// diff updates what it indexes by address without reading the spent
// outputs back). An output created and spent within the same diff appears
// in neither.
//
// A Diff is not safe for concurrent mutation; once published (kept by the
// LedgerDB, or inside a mempool snapshot) it is only read.
type Diff struct {
	Inserts map[TxIn]TxOut
	Deletes map[TxIn]TxOut
	// Txs is the number of txs whose effect the diff records: the rules
	// count each tx they apply, Append adds the counts. It travels with the
	// diff because only the code that applied the txs knows it (a block
	// carrying a certificate applies a closure it does not contain).
	Txs int
}

// NewDiff returns an empty diff.
func NewDiff() *Diff {
	return &Diff{Inserts: map[TxIn]TxOut{}, Deletes: map[TxIn]TxOut{}}
}

// Insert records a created output.
func (d *Diff) Insert(in TxIn, out TxOut) { d.Inserts[in] = out }

// Delete records that the output spent, at in, is spent. Spending an
// output this diff created cancels the insert: the backing store never saw
// it.
func (d *Diff) Delete(in TxIn, spent TxOut) {
	if _, ok := d.Inserts[in]; ok {
		delete(d.Inserts, in)
		return
	}
	d.Deletes[in] = spent
}

// Append folds later (a diff applied after d) into d.
func (d *Diff) Append(later *Diff) {
	for in, spent := range later.Deletes {
		d.Delete(in, spent)
	}
	for in, out := range later.Inserts {
		d.Insert(in, out)
	}
	d.Txs += later.Txs
}

// Clone returns a copy that can be mutated without touching d.
func (d *Diff) Clone() *Diff {
	return &Diff{Inserts: maps.Clone(d.Inserts), Deletes: maps.Clone(d.Deletes), Txs: d.Txs}
}

// Len is the number of changed entries.
func (d *Diff) Len() int { return len(d.Inserts) + len(d.Deletes) }

// Overlay is a UTxO view: Base with Diffs applied oldest first.
type Overlay struct {
	Base  UTxO
	Diffs []*Diff // oldest first
}

// Lookup consults the diffs newest first, then the base.
func (o Overlay) Lookup(in TxIn) (TxOut, bool, error) {
	for i := len(o.Diffs) - 1; i >= 0; i-- {
		d := o.Diffs[i]
		if out, ok := d.Inserts[in]; ok {
			return out, true, nil
		}
		if _, ok := d.Deletes[in]; ok {
			return TxOut{}, false, nil
		}
	}
	if o.Base == nil {
		return TxOut{}, false, nil
	}
	return o.Base.Lookup(in)
}

// MapUTxO is an in-memory UTxO set, for genesis, tests and models.
type MapUTxO map[TxIn]TxOut

func (m MapUTxO) Lookup(in TxIn) (TxOut, bool, error) {
	out, ok := m[in]
	return out, ok, nil
}
