package mempool

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/ledger"
)

func TestSyncDropsWhatTheBlockIncluded(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
	a, b := w.chain(t, in0, g[in0], 3), w.chain(t, in1, g[in1], 2)
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{})
	mustAdd(t, m, a[0], b[0], a[1], b[1], a[2])

	if r := mustSync(t, m); r.Synced {
		t.Fatalf("sync at an unchanged tip did work: %+v", r)
	}
	// The adopted block holds a[0] and b[0].
	_, _, u := revalidate(g, 0, []*ledger.Tx{a[0], b[0]})
	tip := l.advance(u)
	r := mustSync(t, m)
	if !r.Synced || r.Tip != tip || r.Revalidated != 5 || !equalHashes(r.Dropped, hashes([]*ledger.Tx{a[0], b[0]})) {
		t.Fatalf("report %+v", r)
	}
	want := []*ledger.Tx{a[1], b[1], a[2]}
	_, _, after := revalidate(u, 0, want)
	checkSnapshot(t, m.Snapshot(), want, after, probesOf(g, a, b))
	if got := m.Snapshot().Tip(); got != tip {
		t.Fatalf("snapshot tip %s, want %s", got, tip)
	}
	if s := m.Stats(); s.Syncs != 1 || s.DroppedOnSync != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestSyncDropsExpired(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	ttl := uint64(3)
	tx, err := ledger.BuildPayment(params, []ledger.TxIn{in}, g[in].Coin, nil, w.addrs[0], &ttl, w.keys[:1])
	if err != nil {
		t.Fatal(err)
	}
	l := newTestLedger(g) // tip at slot 1: txs validated for slot 2
	m := newTestMempool(t, l, Options{})
	mustAdd(t, m, tx)
	l.advance(g) // slot 2: validated for slot 3 = ttl
	if r := mustSync(t, m); len(r.Dropped) != 1 || m.Snapshot().Len() != 0 {
		t.Fatalf("expired tx kept: %+v", r)
	}
}

// The removal-during-sync regression: a removal issued while the sync reads
// the new tip's ledger must not be undone by the sync's commit.
func TestRemovalDuringSyncIsNotResurrected(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
	a, b := w.chain(t, in0, g[in0], 2), w.chain(t, in1, g[in1], 3)
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{})
	mustAdd(t, m, a[0], b[0], a[1], b[1], b[2])

	// The next tip's views stop at their first lookup until told to go on.
	reading, proceed := make(chan struct{}), make(chan struct{})
	first := true
	l.setOnLookup(func() {
		if first { // only the sync goroutine reads the new view
			first = false
			close(reading)
			<-proceed
		}
	})
	l.advance(g)

	type result struct {
		r   SyncReport
		err error
	}
	done := make(chan result)
	go func() {
		r, err := m.Sync(context.Background())
		done <- result{r, err}
	}()
	<-reading
	l.setOnLookup(nil)
	removed, err := m.RemoveTxs(context.Background(), []block.Hash{b[1].Hash()})
	if err != nil {
		t.Fatal(err)
	}
	if want := hashes(b[1:]); !equalHashes(removed, want) { // b[2] spent b[1]'s change
		t.Fatalf("removed %s, want %s", short(removed), short(want))
	}
	close(proceed)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	for _, tx := range b[1:] {
		if m.Snapshot().Has(tx.Hash()) {
			t.Fatalf("removed tx %s resurrected by the sync (report %+v)", block.Hash(tx.Hash()).Short(), res.r)
		}
	}
	want := []*ledger.Tx{a[0], b[0], a[1]}
	_, _, u := revalidate(g, 0, want)
	checkSnapshot(t, m.Snapshot(), want, u, probesOf(g, a, b))
	if res.r.Restarts != 1 || m.Stats().SyncRestarts != 1 {
		t.Fatalf("sync restarts %d, want 1", res.r.Restarts)
	}
}

// Readers never wait for a sync: Snapshot returns while the sync holds the
// add lock, while adds queue behind it.
func TestSnapshotWhileSyncHoldsTheLock(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
	a, b := w.chain(t, in0, g[in0], 2), w.chain(t, in1, g[in1], 1)
	l := newTestLedger(g)
	locked, unlock := make(chan struct{}), make(chan struct{})
	m := newTestMempool(t, l, Options{hooks: hooks{underLock: func() {
		close(locked)
		<-unlock
	}}})
	mustAdd(t, m, a...)
	l.advance(g)
	synced := make(chan error)
	go func() {
		_, err := m.Sync(context.Background())
		synced <- err
	}()
	<-locked

	read := make(chan *Snapshot)
	go func() { read <- m.Snapshot() }()
	select {
	case s := <-read:
		if s.Len() != 2 {
			t.Fatalf("snapshot during the sync holds %d txs", s.Len())
		}
	case <-time.After(waittest.Hang):
		t.Fatalf("Snapshot blocked for %v while the sync held the add lock", waittest.Hang)
	}
	added := make(chan error)
	go func() { added <- m.Add(context.Background(), b[0]) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := m.Add(ctx, b[0]); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("add while the sync holds the lock: %v, want it to wait", err)
	}
	close(unlock)
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	if s := m.Snapshot(); s.Len() != 3 || s.Tip() != l.tip {
		t.Fatalf("after: %d txs at %s", s.Len(), s.Tip())
	}
}

func TestRunSyncsOnTipChange(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 3)
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{})
	mustAdd(t, m, txs...)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- m.Run(ctx) }()

	// A burst of tip changes ends with a block holding txs[0].
	l.advance(g)
	_, _, u := revalidate(g, 0, txs[:1])
	tip := l.advance(u)
	waittest.Until(t, "Run syncs to the new tip", func() bool { return m.Snapshot().Tip() == tip })
	if s := m.Snapshot(); s.Len() != 2 || s.Has(txs[0].Hash()) {
		t.Fatalf("after sync: %d txs", s.Len())
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// A sync's commit equals one full revalidation of everything held at the
// commit, however many adds interleave with its rounds: adds are made at
// each of its catch-up points, with a small delta cap so the rounds, the
// round limit and the residual under the lock all happen.
func TestPropertySyncEqualsFullRevalidation(t *testing.T) {
	w := newWallet(4)
	g := w.genesis()
	rapid.Check(t, func(rt *rapid.T) {
		l := newTestLedger(g)
		var roundAdds [][]*ledger.Tx // the adds to make after each round
		var added []*ledger.Tx       // those made
		opts := Options{
			SyncDeltaCap:  rapid.IntRange(1, 3).Draw(rt, "delta cap"),
			SyncMaxRounds: rapid.IntRange(1, 4).Draw(rt, "max rounds"),
		}
		var m *Mempool
		opts.hooks.afterRevalidate = func(round int) {
			if round < len(roundAdds) {
				mustAdd(rt, m, roundAdds[round]...)
				added = append(added, roundAdds[round]...)
			}
		}
		m = newTestMempool(rt, l, opts)

		// The old state: chains of random length, interleaved.
		ext := newExtender(w, g)
		var held []*ledger.Tx
		for range rapid.IntRange(0, 12).Draw(rt, "held") {
			held = append(held, ext.next(rt, rapid.IntRange(0, 3).Draw(rt, "key")))
		}
		mustAdd(rt, m, held...)

		// The new tip: a block with a prefix of the mempool, maybe also a tx
		// of its own that conflicts with the mempool.
		prefix := rapid.IntRange(0, len(held)).Draw(rt, "block prefix")
		_, _, newUTxO := revalidate(g, 0, held[:prefix])
		var external []*ledger.Tx
		if rapid.Bool().Draw(rt, "conflict") {
			k := rapid.IntRange(0, 3).Draw(rt, "conflict key")
			if in, out, ok := ext.unspentOf(newUTxO, k); ok {
				external = append(external, w.pay(rt, in, out, k, (k+1)%4, 3_000_000))
				_, _, newUTxO = revalidate(newUTxO, 0, external)
			}
		}

		// Adds during the sync, extending the old state's chains. Those
		// planned for rounds that do not happen are never made.
		for range opts.SyncMaxRounds + 1 {
			var batch []*ledger.Tx
			for range rapid.IntRange(0, 5).Draw(rt, "adds in round") {
				batch = append(batch, ext.next(rt, rapid.IntRange(0, 3).Draw(rt, "key")))
			}
			roundAdds = append(roundAdds, batch)
		}

		l.advance(newUTxO)
		r := mustSync(rt, m)
		all := append(append([]*ledger.Tx(nil), held...), added...)
		want, dropped, after := revalidate(newUTxO, 0, all)
		checkSnapshot(rt, m.Snapshot(), want, after, probesOf(g, all, external))
		if !equalHashes(r.Dropped, hashes(dropped)) {
			t.Fatalf("sync dropped %s, model %s", short(r.Dropped), short(hashes(dropped)))
		}
		if r.Rounds > opts.SyncMaxRounds || r.Revalidated != len(all) {
			t.Fatalf("report %+v: %d rounds (max %d), want %d revalidated", r, r.Rounds, opts.SyncMaxRounds, len(all))
		}
	})
}

// extender builds txs that extend the key chains of a model state: each
// key's next tx spends the newest unspent output of that key.
type extender struct {
	w    *wallet
	tips map[int]ledger.TxIn // the output key k's next tx spends
	outs map[ledger.TxIn]ledger.TxOut
}

func newExtender(w *wallet, g ledger.MapUTxO) *extender {
	e := &extender{w: w, tips: map[int]ledger.TxIn{}, outs: map[ledger.TxIn]ledger.TxOut{}}
	for k, a := range w.addrs {
		in := ledger.GenesisTxIn(a)
		e.tips[k], e.outs[in] = in, g[in]
	}
	return e
}

func (e *extender) next(t tb, k int) *ledger.Tx {
	in := e.tips[k]
	tx := e.w.spend(t, in, e.outs[in])
	change := ledger.TxIn{TxID: tx.ID(), Index: uint32(len(tx.Outputs) - 1)}
	e.tips[k], e.outs[change] = change, tx.Outputs[len(tx.Outputs)-1]
	return tx
}

// unspentOf returns the output of key k that is unspent in u, if any.
func (e *extender) unspentOf(u ledger.MapUTxO, k int) (ledger.TxIn, ledger.TxOut, bool) {
	for in, out := range u {
		if e.w.keyOf(out.Address) == k {
			return in, out, true
		}
	}
	return ledger.TxIn{}, ledger.TxOut{}, false
}

// On a chain extension the sync carries the txs: those whose inputs the
// block spent (included or conflicting) go, and so do the expired; a tx
// whose input's creator went is kept only if the block put that output on
// the chain, which is the only case it looks up. The result is the full
// revalidation's.
func TestSyncOnAnExtensionCarriesTheTxs(t *testing.T) {
	w := newWallet(3)
	g := w.genesis()
	in0, in1, in2 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1]), ledger.GenesisTxIn(w.addrs[2])
	a, b := w.chain(t, in0, g[in0], 3), w.chain(t, in1, g[in1], 2)
	ttl := uint64(3) // the slot the sync below validates for
	c, err := ledger.BuildPayment(params, []ledger.TxIn{in2}, g[in2].Coin, nil, w.addrs[2], &ttl, w.keys[2:3])
	if err != nil {
		t.Fatal(err)
	}
	l := newExtendingLedger(g)
	m := newTestMempool(t, l, Options{})
	held := []*ledger.Tx{a[0], b[0], c, a[1], b[1], a[2]}
	mustAdd(t, m, held...)

	// The block holds a[0] and a tx that conflicts with b[0].
	conflict := w.pay(t, in1, g[in1], 1, 0, 3_000_000)
	_, _, u := revalidate(g, 0, []*ledger.Tx{a[0], conflict})
	l.advance(u)
	r := mustSync(t, m)
	kept, dropped, after := revalidate(u, ttl, held)
	if want := []*ledger.Tx{a[1], a[2]}; !equalHashes(hashes(kept), hashes(want)) {
		t.Fatalf("the model keeps %s", short(hashes(kept)))
	}
	checkSnapshot(t, m.Snapshot(), kept, after, probesOf(g, held, []*ledger.Tx{conflict}))
	if !equalHashes(r.Dropped, hashes(dropped)) {
		t.Fatalf("dropped %s, model %s", short(r.Dropped), short(hashes(dropped)))
	}
	// a[1]'s and b[1]'s inputs were created by dropped txs; a[2]'s creator
	// is kept.
	if r.Path != SyncExtension || r.Revalidated != len(held) || r.ViewLookups != 2 {
		t.Fatalf("report %+v, want the extension path, %d judged, 2 lookups", r, len(held))
	}
	if s := m.Stats(); s.Syncs != 1 || s.SyncsExtension != 1 || s.SyncsFull != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// The extension path's reasoning is ledger.Reapply's: a Reapply of one's
// own gets the full revalidation, and so does a view that cannot say what
// was spent.
func TestSyncFullWhenTheExtensionCannotBeTrusted(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 2)
	for _, c := range []struct {
		name   string
		ledger *testLedger
		opts   Options
	}{
		{"own Reapply", newExtendingLedger(g), Options{Reapply: ledger.Reapply}},
		{"plain view", newTestLedger(g), Options{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newTestMempool(t, c.ledger, c.opts)
			mustAdd(t, m, txs...)
			_, _, u := revalidate(g, 0, txs[:1])
			c.ledger.advance(u)
			if r := mustSync(t, m); r.Path != SyncFull || r.Revalidated != 2 || len(r.Dropped) != 1 {
				t.Fatalf("report %+v, want the full path", r)
			}
			if s := m.Stats(); s.SyncsFull != 1 || s.SyncsExtension != 0 {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}
