package chaindb

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// outOf names output j of the test tx tx.
func outOf(tx testTx, j uint32) ledger.TxIn {
	return ledger.TxIn{TxID: block.HashBytes(encodeTx(tx)), Index: j}
}

// genesisIn is the i-th output of testGenesis.
func genesisIn(i uint32) ledger.TxIn {
	var in ledger.TxIn
	in.TxID[0] = 0xee
	in.Index = i
	return in
}

// wantSpent fails unless SpentSince(p) on view answers ok and, for each
// output unspent at p, spent exactly for those in want.
func wantSpent(t *testing.T, view *LedgerView, p block.Point, unspentAtP []ledger.TxIn, want ...ledger.TxIn) {
	t.Helper()
	spent, ok := view.SpentSince(p)
	if !ok {
		t.Fatalf("SpentSince(%s) at %s: not ok", p, view.Point())
	}
	isWanted := map[ledger.TxIn]bool{}
	for _, in := range want {
		isWanted[in] = true
	}
	for _, in := range unspentAtP {
		if got := spent(in); got != isWanted[in] {
			t.Fatalf("SpentSince(%s) at %s: spent(%s) = %v, want %v", p, view.Point(), in, got, isWanted[in])
		}
	}
}

func wantNotOK(t *testing.T, view *LedgerView, p block.Point) {
	t.Helper()
	if _, ok := view.SpentSince(p); ok {
		t.Fatalf("SpentSince(%s) at %s answered; want ok=false", p, view.Point())
	}
}

// On an extension, SpentSince answers for the immutable base and each
// volatile point of the view, from the blocks after it only; an output a
// block both created and spent is left to Lookup.
func TestSpentSinceOnAnExtension(t *testing.T) {
	db := mustOpen(t, "db", testOptions(10, testGenesis(4), vfs.NewMem()))
	defer db.Close()
	f := newForger()
	g0, g1, g2, g3 := genesisIn(0), genesisIn(1), genesisIn(2), genesisIn(3)
	tx1 := testTx{Spend: []ledger.TxIn{g0}, Outs: []testOut{{Coin: 1}}}
	x := outOf(tx1, 0)
	b1 := f.next(nil, 1, tx1)
	// b2 spends g1 and x, and creates a then spends it in the same block.
	tx2 := testTx{Spend: []ledger.TxIn{g1, x}, Outs: []testOut{{Coin: 2}}}
	tx3 := testTx{Spend: []ledger.TxIn{g2}, Outs: []testOut{{Coin: 3}}}
	a := outOf(tx3, 0)
	tx4 := testTx{Spend: []ledger.TxIn{a}, Outs: []testOut{{Coin: 4}}}
	b2 := f.next(b1.Header, 1, tx2, tx3, tx4)
	mustAdd(t, db, b1, b2)

	view, tip := db.TipLedger()
	defer view.Close()
	if tip != tipOf(b2) {
		t.Fatalf("tip %s", tip)
	}
	wantSpent(t, view, block.Origin, []ledger.TxIn{g0, g1, g2, g3}, g0, g1, g2)
	wantSpent(t, view, b1.Point(), []ledger.TxIn{g1, g2, g3, x}, g1, g2, x)
	wantSpent(t, view, b2.Point(), []ledger.TxIn{g3, outOf(tx2, 0), outOf(tx4, 0)})
	if _, ok, _ := view.Lookup(a); ok {
		t.Fatal("an output created and spent in b2 is unspent")
	}
	wantNotOK(t, view, block.Point{Slot: 1, Hash: block.Hash{0xab}}) // never seen
}

// After a rollback the abandoned blocks are no points of the new tip's
// view; the intersection and the fork's blocks are.
func TestSpentSinceAfterARollback(t *testing.T) {
	db := mustOpen(t, "db", testOptions(10, testGenesis(3), vfs.NewMem()))
	defer db.Close()
	f := newForger()
	g0, g1, g2 := genesisIn(0), genesisIn(1), genesisIn(2)
	b1 := f.next(nil, 1, testTx{Spend: []ledger.TxIn{g0}, Outs: []testOut{{Coin: 1}}})
	lost := f.next(b1.Header, 1, testTx{Spend: []ledger.TxIn{g1}, Outs: []testOut{{Coin: 1}}})
	mustAdd(t, db, b1, lost)
	won1 := f.next(b1.Header, 1, testTx{Spend: []ledger.TxIn{g2}, Outs: []testOut{{Coin: 1}}})
	won2 := f.next(won1.Header, 1)
	if res := mustAdd(t, db, won1, won2); res.RolledBack != 1 {
		t.Fatalf("add %+v, want a rollback of one block", res)
	}
	view, _ := db.TipLedger()
	defer view.Close()
	wantNotOK(t, view, lost.Point())
	wantSpent(t, view, b1.Point(), []ledger.TxIn{g1, g2}, g2)
	wantSpent(t, view, won1.Point(), []ledger.TxIn{g1})
}

// A point the immutable tip has passed is flushed: the view no longer has
// the diffs after it. The immutable tip itself is the view's base.
func TestSpentSinceFlushedPastTheImmutableTip(t *testing.T) {
	const k = 2
	db := mustOpen(t, "db", testOptions(k, testGenesis(3), vfs.NewMem()))
	defer db.Close()
	f := newForger()
	g0, g1, g2 := genesisIn(0), genesisIn(1), genesisIn(2)
	b1 := f.next(nil, 1, testTx{Spend: []ledger.TxIn{g0}, Outs: []testOut{{Coin: 1}}})
	b2 := f.next(b1.Header, 1, testTx{Spend: []ledger.TxIn{g1}, Outs: []testOut{{Coin: 1}}})
	b3 := f.next(b2.Header, 1, testTx{Spend: []ledger.TxIn{g2}, Outs: []testOut{{Coin: 1}}})
	b4 := f.next(b3.Header, 1)
	mustAdd(t, db, b1, b2, b3, b4)
	if imm := db.ImmutableTip(); imm != tipOf(b2) {
		t.Fatalf("immutable tip %s, want b2", imm)
	}
	view, _ := db.TipLedger()
	defer view.Close()
	wantNotOK(t, view, block.Origin)
	wantNotOK(t, view, b1.Point())
	wantSpent(t, view, b2.Point(), []ledger.TxIn{g2}, g2)
	wantSpent(t, view, b3.Point(), []ledger.TxIn{})
}

// A view held while blocks are added, and flushed, answers as when it was
// taken; a closed view answers nothing.
func TestSpentSinceOfAHeldView(t *testing.T) {
	const k = 1
	db := mustOpen(t, "db", testOptions(k, testGenesis(3), vfs.NewMem()))
	defer db.Close()
	f := newForger()
	g0, g1, g2 := genesisIn(0), genesisIn(1), genesisIn(2)
	b1 := f.next(nil, 1, testTx{Spend: []ledger.TxIn{g0}, Outs: []testOut{{Coin: 1}}})
	mustAdd(t, db, b1)
	held, _ := db.TipLedger()
	b2 := f.next(b1.Header, 1, testTx{Spend: []ledger.TxIn{g1}, Outs: []testOut{{Coin: 1}}})
	b3 := f.next(b2.Header, 1, testTx{Spend: []ledger.TxIn{g2}, Outs: []testOut{{Coin: 1}}})
	mustAdd(t, db, b2, b3) // b1, then b2, flushed
	if imm := db.ImmutableTip(); imm != tipOf(b2) {
		t.Fatalf("immutable tip %s, want b2", imm)
	}
	wantSpent(t, held, block.Origin, []ledger.TxIn{g0, g1, g2}, g0)
	wantSpent(t, held, b1.Point(), []ledger.TxIn{g1, g2})
	wantNotOK(t, held, b2.Point()) // after the view's point
	held.Close()
	wantNotOK(t, held, block.Origin)
}

// The mempool reaches SpentSince through an interface of its own (it may
// not import chaindb); this is its shape.
var _ interface {
	SpentSince(block.Point) (func(ledger.TxIn) bool, bool)
} = (*LedgerView)(nil)
