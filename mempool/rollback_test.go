package mempool

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
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
	deadline := time.Now().Add(10 * time.Second)
	for s := m.Snapshot(); s.Tip() != wonTip || !s.Has(a[2].Hash()); s = m.Snapshot() {
		if time.Now().After(deadline) {
			t.Fatalf("Run did not give back the abandoned txs: %d txs at %s", s.Len(), s.Tip())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, _, after := revalidate(won, 0, a)
	checkSnapshot(t, m.Snapshot(), a, after, probesOf(g, a, []*ledger.Tx{both}))
}
