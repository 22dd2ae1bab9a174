package mempool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// stillWaiting fails if the add has returned.
func stillWaiting(t *testing.T, added <-chan error) {
	t.Helper()
	select {
	case err := <-added:
		t.Fatalf("add returned (%v) while the mempool was full", err)
	case <-time.After(20 * time.Millisecond):
	}
}

func TestBackpressureAndFull(t *testing.T) {
	w := newWallet(3)
	g := w.genesis()
	var txs []*ledger.Tx
	for k := range 3 {
		in := ledger.GenesisTxIn(w.addrs[k])
		txs = append(txs, w.spend(t, in, g[in]))
	}
	// Room for two txs, not three (the three are the same size).
	capacity := txs[0].Size() + txs[1].Size()
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{CapacityBytes: capacity})
	mustAdd(t, m, txs[0], txs[1])

	// A local submit gives up at its timeout with "mempool full" (a
	// timeout passed already: the free lock is still taken, and the add
	// gives up waiting for room).
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	err := m.Add(ctx, txs[2])
	cancel()
	if !errors.Is(err, ErrFull) || !errors.Is(err, context.DeadlineExceeded) || err.Error()[:len("mempool full")] != "mempool full" {
		t.Fatalf("local submit to a full mempool: %v, want ErrFull", err)
	}
	if m.RecentlyRejected(txs[2].Hash()) {
		t.Fatal("a tx refused for lack of room is remembered as rejected")
	}

	// A peer's add waits for room: a removal frees it.
	added := make(chan error)
	go func() { added <- m.Add(context.Background(), txs[2]) }()
	stillWaiting(t, added)
	if _, err := m.RemoveTxs(context.Background(), []block.Hash{txs[0].Hash()}); err != nil {
		t.Fatal(err)
	}
	if err := <-added; err != nil {
		t.Fatalf("waiting add after the removal: %v", err)
	}

	// So does a sync that drops what the adopted block included.
	again := txs[0] // removed, so admissible again
	go func() { added <- m.Add(context.Background(), again) }()
	stillWaiting(t, added)
	_, _, u := revalidate(g, 0, txs[1:2])
	l.advance(u)
	if r := mustSync(t, m); len(r.Dropped) != 1 {
		t.Fatalf("sync dropped %d, want 1", len(r.Dropped))
	}
	if err := <-added; err != nil {
		t.Fatalf("waiting add after the sync: %v", err)
	}
	want := []*ledger.Tx{txs[2], again}
	_, _, after := revalidate(u, 0, want)
	checkSnapshot(t, m.Snapshot(), want, after, probesOf(g, txs, want))
}

func TestTxLargerThanCapacity(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	tx := w.spend(t, in, g[in])
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{CapacityBytes: tx.Size() - 1})
	if err := m.Add(context.Background(), tx); !errors.Is(err, ErrFull) {
		t.Fatalf("tx larger than the capacity: %v, want ErrFull at once", err)
	}
}
