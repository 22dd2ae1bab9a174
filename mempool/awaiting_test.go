package mempool

import (
	"testing"

	"github.com/leiosnode/leiosnode/ledger"
)

// The txs awaiting their inputs are bounded in count and in bytes, the
// oldest forgotten first, and each is taken out once, by the parent it
// awaited.
func TestAwaitingIsBounded(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 5)
	parentOf := func(i int) []ledger.TxIn { return txs[i].Inputs }

	a := newAwaiting(3, 1<<20)
	for i := 1; i < 5; i++ {
		a.hold(txs[i], parentOf(i))
	}
	if len(a.txs) != 3 || len(a.childrenOf(txs[0].ID())) != 0 {
		t.Fatalf("%d held; the oldest, awaiting txs[0], should be forgotten", len(a.txs))
	}
	if got := a.childrenOf(txs[1].ID()); len(got) != 1 || got[0] != txs[2] {
		t.Fatalf("awaiting txs[1]: %d", len(got))
	}
	if got := a.childrenOf(txs[1].ID()); len(got) != 0 {
		t.Fatal("taken out twice")
	}

	bytes := newAwaiting(100, 2*txs[1].Size())
	for i := 1; i < 5; i++ {
		bytes.hold(txs[i], parentOf(i))
	}
	if len(bytes.txs) != 2 || bytes.bytes > bytes.limitBytes {
		t.Fatalf("%d txs of %d bytes held, bound %d", len(bytes.txs), bytes.bytes, bytes.limitBytes)
	}
}
