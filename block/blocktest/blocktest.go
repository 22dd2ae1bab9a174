// Package blocktest builds stand-in txs and endorser blocks for the tests
// of the packages that store, fetch and relay them, which look at hashes
// and sizes only: nothing here is a valid ledger tx.
package blocktest

import (
	"encoding/binary"

	"github.com/leiosnode/leiosnode/block"
)

// TB is the part of testing.TB (and rapid.T) the builders need.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Tx is a deterministic stand-in tx of size bytes (at least 8); distinct
// seeds give distinct txs.
func Tx(seed uint64, size int) []byte {
	tx := make([]byte, max(size, 8))
	binary.BigEndian.PutUint64(tx, seed)
	for i := 8; i < len(tx); i++ {
		tx[i] = byte(seed*31 + uint64(i))
	}
	return tx
}

// Seeds lists from, from+1, …, to-1.
func Seeds(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s < to; s++ {
		out = append(out, s)
	}
	return out
}

// EB is an EB body with its closure, in body order.
type EB struct {
	Body *block.EBBody
	Txs  [][]byte
}

// NewEB builds, under block.DefaultEBLimits, the EB of the txs Tx makes of
// seeds, each size bytes.
func NewEB(tb TB, size int, seeds ...uint64) *EB {
	tb.Helper()
	txs := make([][]byte, len(seeds))
	for i, s := range seeds {
		txs[i] = Tx(s, size)
	}
	return EBOf(tb, txs)
}

// EBOf builds the EB of txs, in that order, under block.DefaultEBLimits.
func EBOf(tb TB, txs [][]byte) *EB {
	tb.Helper()
	entries := make([]block.EBTx, len(txs))
	for i, tx := range txs {
		entries[i] = block.EBTx{TxHash: block.HashBytes(tx), Size: uint32(len(tx))}
	}
	body, err := block.NewEBBody(entries, block.DefaultEBLimits)
	if err != nil {
		tb.Fatal(err)
	}
	return &EB{Body: body, Txs: txs}
}

// Point is the EB's point when announced at slot.
func (eb *EB) Point(slot uint64) block.Point { return block.Point{Slot: slot, Hash: eb.Body.Hash()} }

// Announcement is what an RB header announcing the EB carries.
func (eb *EB) Announcement() block.Announcement { return eb.Body.Announcement() }
