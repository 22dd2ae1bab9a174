package mempool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// badSignature is tx with one bit of its first witness's signature flipped.
func badSignature(t tb, tx *ledger.Tx) *ledger.Tx {
	t.Helper()
	sig := tx.Witnesses[0].Signature
	raw := bytes.Clone(tx.Bytes())
	i := bytes.Index(raw, sig[:])
	if i < 0 {
		t.Fatal("signature not found in the tx's bytes")
	}
	raw[i+40] ^= 1
	bad, err := ledger.DecodeTx(raw)
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// addTxsCandidates are txs a batch is drawn from: chains of valid txs per
// key (a tx may come before its parent in a batch), their twins with a bad
// signature, double spends, a tx witnessed by the wrong key and one with a
// bad signature by the wrong key (the missing witness is its reason).
func addTxsCandidates(t tb, w *wallet, g ledger.MapUTxO) []*ledger.Tx {
	var out []*ledger.Tx
	for k := range w.keys {
		in := ledger.GenesisTxIn(w.addrs[k])
		chain := w.chain(t, in, g[in], 3)
		out = append(out, chain...)
		out = append(out, badSignature(t, chain[0]), badSignature(t, chain[2]))
		out = append(out, w.pay(t, in, g[in], k, (k+1)%len(w.keys), 7_000_000)) // spends what chain[0] spends
	}
	in1 := ledger.GenesisTxIn(w.addrs[1])
	stranger := w.pay(t, in1, g[in1], 2, 2, 3_000_000)
	return append(out, stranger, badSignature(t, stranger))
}

// AddTxs admits and refuses what Add does called for each tx in turn, for
// the same reasons, in the same order, with the same counters and the same
// txs remembered as rejected, whatever the batch: txs held before, a tx
// twice, children before or after their parents, bad signatures anywhere.
func TestPropertyAddTxsIsAddOneByOne(t *testing.T) {
	w := newWallet(3)
	g := w.genesis()
	cands := addTxsCandidates(t, w, g)
	rapid.Check(t, func(t *rapid.T) {
		held := rapid.SliceOfN(rapid.SampledFrom(cands), 0, 4).Draw(t, "held")
		batch := rapid.SliceOfN(rapid.SampledFrom(cands), 1, 16).Draw(t, "batch")
		one := newTestMempool(t, newTestLedger(g), Options{})
		many := newTestMempool(t, newTestLedger(g), Options{})
		ctx := context.Background()
		for _, tx := range held {
			if a, b := errString(one.Add(ctx, tx)), errString(many.Add(ctx, tx)); a != b {
				t.Fatalf("adding the held txs: %s and %s", a, b)
			}
		}
		errs := many.AddTxs(ctx, batch)
		if len(errs) != len(batch) {
			t.Fatalf("%d errors for %d txs", len(errs), len(batch))
		}
		for i, tx := range batch {
			if want, got := errString(one.Add(ctx, tx)), errString(errs[i]); got != want {
				t.Fatalf("tx %d: AddTxs %s, Add %s", i, got, want)
			}
		}
		if a, b := snapshotHashes(one.Snapshot()), snapshotHashes(many.Snapshot()); !slices.Equal(a, b) {
			t.Fatalf("held %s, one by one %s", short(b), short(a))
		}
		if a, b := fmt.Sprint(one.Stats()), fmt.Sprint(many.Stats()); a != b {
			t.Fatalf("stats %s, one by one %s", b, a)
		}
		for _, tx := range cands {
			if one.RecentlyRejected(tx.Hash()) != many.RecentlyRejected(tx.Hash()) {
				t.Fatalf("tx %s: RecentlyRejected differs", tx.Hash())
			}
		}
	})
}

// A bad signature in a batch refuses its own tx, for that reason, and no
// other: the txs around it, a child of the one before it included, are
// admitted.
func TestAddTxsOneBadSignature(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
	chain := w.chain(t, in0, g[in0], 2)
	other := w.spend(t, in1, g[in1])
	m := newTestMempool(t, newTestLedger(g), Options{})
	errs := m.AddTxs(context.Background(), []*ledger.Tx{chain[0], badSignature(t, other), chain[1]})
	if errs[0] != nil || !errors.Is(errs[1], ledger.ErrBadWitness) || errs[2] != nil {
		t.Fatalf("errors %v, want nil, a bad witness, nil", errs)
	}
	if !m.RecentlyRejected(badSignature(t, other).Hash()) || m.Snapshot().Len() != 2 {
		t.Fatalf("rejected remembered %v, %d txs held", m.RecentlyRejected(badSignature(t, other).Hash()), m.Snapshot().Len())
	}
}

// With an Apply of the caller's, AddTxs validates every tx with it, as Add
// does: nothing is verified behind its back.
func TestAddTxsUsesTheCallersApply(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 3)
	var applied []block.Hash
	m := newTestMempool(t, newTestLedger(g), Options{Apply: func(p ledger.Params, u ledger.UTxO, slot uint64, tx *ledger.Tx) (*ledger.Diff, error) {
		applied = append(applied, tx.Hash())
		return ledger.Apply(p, u, slot, tx)
	}})
	for i, err := range m.AddTxs(context.Background(), txs) {
		if err != nil {
			t.Fatalf("tx %d: %v", i, err)
		}
	}
	if !slices.Equal(applied, hashes(txs)) {
		t.Fatalf("Apply saw %s, want %s", short(applied), short(hashes(txs)))
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func snapshotHashes(s *Snapshot) []block.Hash {
	var hs []block.Hash
	for e := range s.All() {
		hs = append(hs, e.Tx.Hash())
	}
	return hs
}

// Once an add of a batch gives up with its ctx ended, the txs after it are
// not tried, even one that would fit: tx submission stops there, and saw
// nothing admitted after that point when it added one by one.
func TestAddTxsStopsOnceCtxEnded(t *testing.T) {
	w := newWallet(3)
	g := w.genesis()
	in0, in1, in2 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1]), ledger.GenesisTxIn(w.addrs[2])
	held := w.spend(t, in0, g[in0])
	big := w.pay(t, in1, g[in1], 1, 0, 5_000_000) // two outputs
	small := w.spend(t, in2, g[in2])
	if big.Size() <= small.Size() {
		t.Fatal("the two-output tx is not the bigger")
	}
	// Room for held and small, not for held and big.
	m := newTestMempool(t, newTestLedger(g), Options{CapacityBytes: held.Size() + small.Size()})
	mustAdd(t, m, held)
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	errs := m.AddTxs(ctx, []*ledger.Tx{big, small})
	if !errors.Is(errs[0], ErrFull) || !errors.Is(errs[1], ErrBusy) || !errors.Is(errs[1], context.DeadlineExceeded) {
		t.Fatalf("errors %v, want mempool full, then busy", errs)
	}
	if m.Snapshot().Len() != 1 {
		t.Fatalf("%d txs held, want 1", m.Snapshot().Len())
	}
	if err := m.Add(ctx, small); err != nil {
		t.Fatalf("small alone: %v (it must fit, or the test shows nothing)", err)
	}
}
