package mempool

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/ledger"
)

// After a rollback, Run gives back what the fork that lost took from the
// mempool: the abandoned block's txs, then the txs the sync dropped because
// they spent those, in their old order; a tx the winning chain also holds
// stays out.
func TestRunGivesBackWhatARollbackAbandoned(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
	a := w.chain(t, in0, g[in0], 3) // a[0] in the losing block, a[1] and a[2] spend it
	both := w.spend(t, in1, g[in1]) // in the losing block and in the winning one
	l := newTestLedger(g)
	_, _, lost := revalidate(g, 0, []*ledger.Tx{a[0], both})
	lostTip := l.advance(lost)
	m := newTestMempool(t, l, Options{
		Abandoned: func(old block.Tip) ([]*ledger.Tx, error) {
			if old == lostTip && l.currentTip() != lostTip {
				return []*ledger.Tx{a[0], both}, nil
			}
			return nil, nil
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	mustAdd(t, m, a[1], a[2])

	_, _, won := revalidate(g, 0, []*ledger.Tx{both})
	wonTip := l.advance(won) // the rollback: the winning block replaces the losing one
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- m.Run(ctx) }()
	waittest.Until(t, "Run gives back the abandoned txs", func() bool {
		s := m.Snapshot()
		return s.Tip() == wonTip && s.Has(a[2].Hash())
	})
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, _, after := revalidate(won, 0, a)
	checkSnapshot(t, m.Snapshot(), a, after, probesOf(g, a, []*ledger.Tx{both}))
}

// A tx admitted while the sync after a rollback runs, spending what the
// lost block's tx created, is dropped by that sync like those held before
// it — and given back like them, though the snapshot from before the sync
// never held it.
func TestRunGivesBackWhatWasAdmittedDuringTheSync(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in0 := ledger.GenesisTxIn(w.addrs[0])
	a := w.chain(t, in0, g[in0], 3) // a[0] in the losing block, a[1] held, a[2] admitted mid-sync
	l := newTestLedger(g)
	_, _, lost := revalidate(g, 0, a[:1])
	lostTip := l.advance(lost)
	var addedMidSync bool
	m := newTestMempool(t, l, Options{
		Abandoned: func(old block.Tip) ([]*ledger.Tx, error) {
			if old == lostTip && l.currentTip() != lostTip {
				return a[:1], nil
			}
			return nil, nil
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	m.opts.hooks.afterRevalidate = func(round int) {
		if round == 0 && !addedMidSync {
			addedMidSync = true
			mustAdd(t, m, a[2])
		}
	}
	mustAdd(t, m, a[1])

	wonTip := l.advance(g) // the rollback: back to genesis, the lost block's tx in no block
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- m.Run(ctx) }()
	waittest.Until(t, "Run gives back every tx", func() bool {
		s := m.Snapshot()
		return s.Tip() == wonTip && s.Len() >= len(a)
	})
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !addedMidSync {
		t.Fatal("the sync never ran its hook")
	}
	for _, tx := range a {
		if !m.Snapshot().Has(tx.Hash()) {
			t.Fatalf("tx %x not given back", tx.Hash())
		}
	}
}

// On a chain with forks whose views say what was spent, the sync after a
// rollback takes the full path and Run gives back what the lost block held;
// the next extension takes the extension path and keeps what it did not
// include.
func TestRunGivesBackOnAChainWithForks(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
	a := w.chain(t, in0, g[in0], 3)
	both := w.spend(t, in1, g[in1])
	c := newTestChain(5, g)
	mustBlock := func(parent *chainBlock, txs ...*ledger.Tx) *chainBlock {
		t.Helper()
		b, err := c.add(parent, 1, txs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	lost := mustBlock(c.tip(), a[0], both)
	m, err := New(Options{TipLedger: c.TipLedger, TipChanged: c.TipChanged, Abandoned: c.Abandoned,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		m.Close()
		if n := c.open.Load(); n != 0 {
			t.Errorf("%d ledger views never released", n)
		}
	}()
	mustAdd(t, m, a[1], a[2])
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- m.Run(ctx) }()
	waitFor := func(what string, done func(*Snapshot) bool) {
		t.Helper()
		waittest.Until(t, "Run to "+what, func() bool { return done(m.Snapshot()) })
	}

	won := mustBlock(mustBlock(c.volatile()[0], both)) // two blocks off the root beat lost
	if c.onSelected(lost.tip.Point) {
		t.Fatal("the fork did not win")
	}
	waitFor("give back the abandoned txs", func(s *Snapshot) bool { return s.Tip() == won.tip && s.Len() == 3 })
	_, _, after := revalidate(won.utxo, 0, a)
	checkSnapshot(t, m.Snapshot(), a, after, probesOf(g, a, []*ledger.Tx{both}))
	if s := m.Stats(); s.SyncsFull != 1 || s.SyncsExtension != 0 {
		t.Fatalf("after the rollback: stats %+v, want one full sync", s)
	}

	next := mustBlock(won, a[0])
	waitFor("sync to the extension", func(s *Snapshot) bool { return s.Tip() == next.tip })
	_, _, after = revalidate(next.utxo, 0, a[1:])
	checkSnapshot(t, m.Snapshot(), a[1:], after, probesOf(g, a, []*ledger.Tx{both}))
	if s := m.Stats(); s.SyncsExtension != 1 {
		t.Fatalf("after the extension: stats %+v, want one extension sync", s)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
