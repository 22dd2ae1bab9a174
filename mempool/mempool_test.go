package mempool

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

func TestDefaultCapacityIsTheBacklog(t *testing.T) {
	p := consensus.DefaultLeiosParams()
	if want := consensus.MempoolBlocks * p.BlockTxBytes(); DefaultCapacityBytes != want {
		t.Fatalf("DefaultCapacityBytes = %d, want MempoolBlocks × (RB body max + EB closure max) = %d", DefaultCapacityBytes, want)
	}
}

func TestAdd(t *testing.T) {
	w := newWallet(3)
	g := w.genesis()
	in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
	first := w.spend(t, in0, g[in0])
	// A second spend of in0 that differs from first: pays key 2.
	doubleSpend := w.pay(t, in0, g[in0], 0, 2, 5_000_000)
	stranger := w.pay(t, in1, g[in1], 2, 2, 0) // signed by key 2, spends key 1's output
	unknownIn := ledger.TxIn{TxID: [32]byte{9}}
	unknown := w.spend(t, unknownIn, ledger.TxOut{Address: w.addrs[1], Coin: 50_000_000})

	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{})
	tests := []struct {
		name         string
		tx           *ledger.Tx
		wantErr      error // nil: admitted
		wantRejected bool  // remembered by RecentlyRejected
	}{
		{"valid", first, nil, false},
		{"duplicate", first, ErrDuplicate, false},
		{"double spend", doubleSpend, ledger.ErrInputNotInUTxO, true},
		{"missing witness", stranger, ledger.ErrMissingWitness, true},
		{"input not in the UTxO, spent by no tx held", unknown, ledger.ErrInputNotInUTxO, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := m.Add(context.Background(), tc.tx)
			if tc.wantErr == nil && err != nil || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Add: %v, want %v", err, tc.wantErr)
			}
			if got := m.RecentlyRejected(tc.tx.Hash()); got != tc.wantRejected {
				t.Fatalf("RecentlyRejected = %v, want %v", got, tc.wantRejected)
			}
		})
	}
	checkSnapshot(t, m.Snapshot(), []*ledger.Tx{first}, func() ledger.MapUTxO { _, _, u := revalidate(g, 2, []*ledger.Tx{first}); return u }(), probesOf(g, []*ledger.Tx{first, doubleSpend}))

	s := m.Stats()
	if s.Added != 1 || s.Duplicates != 1 || s.Rejected[ledger.ErrInputNotInUTxO.Error()] != 2 || s.Rejected[ledger.ErrMissingWitness.Error()] != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// A snapshot is immutable: later adds and syncs do not show through it.
func TestSnapshotIsImmutable(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 3)
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{})
	mustAdd(t, m, txs[0])
	before := m.Snapshot()
	mustAdd(t, m, txs[1:]...)
	if before.Len() != 1 || before.Has(txs[1].Hash()) || before.LastTicket() != 1 {
		t.Fatalf("old snapshot changed: %d txs, has tx 1: %v", before.Len(), before.Has(txs[1].Hash()))
	}
	// txs[1] spends txs[0]'s change: spent after 2 txs, unspent after 1.
	change := txs[1].Inputs[0]
	if _, ok, _ := before.UTxO().Lookup(change); !ok {
		t.Fatal("old snapshot's UTxO lost an output spent later")
	}
	if _, ok, _ := m.Snapshot().UTxO().Lookup(change); ok {
		t.Fatal("latest snapshot's UTxO still holds a spent output")
	}
	l.advance(g) // a new tip, same UTxO
	mustSync(t, m)
	if before.Len() != 1 || m.Snapshot().Len() != 3 {
		t.Fatalf("after sync: old snapshot %d txs, new %d", before.Len(), m.Snapshot().Len())
	}
}

// The tx-submission walk: a cursor by ticket sees each tx once, across
// adds and syncs that drop txs.
func TestCursorWalk(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
	a, b := w.chain(t, in0, g[in0], 4), w.chain(t, in1, g[in1], 4)
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{})

	var seen []block.Hash
	var cursor uint64
	walk := func() {
		for e := range m.Snapshot().After(cursor) {
			seen = append(seen, e.Tx.Hash())
			cursor = e.Ticket
		}
	}
	mustAdd(t, m, a[0], b[0], a[1])
	walk()
	mustAdd(t, m, b[1], a[2])
	// The block takes a[0] and a[1]: the sync drops them, keeps the tickets
	// of the rest.
	_, _, u := revalidate(g, 0, a[:2])
	l.advance(u)
	if r := mustSync(t, m); len(r.Dropped) != 2 {
		t.Fatalf("sync dropped %d, want 2", len(r.Dropped))
	}
	mustAdd(t, m, b[2], a[3], b[3])
	walk()
	walk() // nothing new
	want := hashes([]*ledger.Tx{a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3]})
	if !equalHashes(seen, want) {
		t.Fatalf("walk saw %s, want %s", short(seen), short(want))
	}
	// Stop early: the iterator honours break.
	n := 0
	for range m.Snapshot().All() {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("break after one: %d yielded", n)
	}
}

func TestRecentlyRejectedIsBounded(t *testing.T) {
	w := newWallet(4)
	g := w.genesis()
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{RejectedMemory: 2})
	var bad []*ledger.Tx
	for i := range 3 {
		in := ledger.GenesisTxIn(w.addrs[i])
		bad = append(bad, w.pay(t, in, g[in], 3, 3, 0)) // signed by key 3
		if err := m.Add(context.Background(), bad[i]); !errors.Is(err, ledger.ErrMissingWitness) {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	for i, want := range []bool{false, true, true} {
		if got := m.RecentlyRejected(bad[i].Hash()); got != want {
			t.Fatalf("RecentlyRejected(bad %d) = %v, want %v (oldest forgotten)", i, got, want)
		}
	}
}

// A child offered before its parent — the parent on its way from another
// peer, or dropped by a rollback's sync until its giveBack — is refused
// for its missing input but not remembered: it awaits the parent and is
// admitted, with the txs that awaited it, once the parent is; one whose
// parent reaches the chain is admitted at the sync. Remembered, it cut
// its whole chain of txs off the node: no peer offers a tx twice.
func TestChildBeforeParentAwaitsIt(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 4)
	m := newTestMempool(t, newTestLedger(g), Options{})
	ctx := context.Background()
	for _, tx := range []*ledger.Tx{txs[2], txs[1]} {
		if err := m.AddRelayed(ctx, []*ledger.Tx{tx})[0]; !errors.Is(err, ledger.ErrInputNotInUTxO) {
			t.Fatalf("a child before its parent: %v", err)
		}
		if m.RecentlyRejected(tx.Hash()) {
			t.Fatal("a child is remembered as rejected: no peer would offer it again")
		}
	}
	if err := m.Add(ctx, txs[0]); err != nil {
		t.Fatal(err)
	}
	if s := m.Snapshot(); s.Len() != 3 || !s.Has(txs[1].Hash()) || !s.Has(txs[2].Hash()) || m.Stats().Awaited != 2 {
		t.Fatalf("%d txs held, %d awaited; want the parent and both that awaited it", s.Len(), m.Stats().Awaited)
	}
	if err := m.Add(ctx, txs[3]); err != nil {
		t.Fatalf("the next of the chain: %v", err)
	}
}

// A child whose parent reaches the chain without passing through the
// mempool is admitted at the sync to that tip.
func TestChildAwaitsItsParentOnChain(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 2)
	l := newTestLedger(g)
	m := newTestMempool(t, l, Options{})
	if err := m.AddRelayed(context.Background(), []*ledger.Tx{txs[1]})[0]; !errors.Is(err, ledger.ErrInputNotInUTxO) {
		t.Fatalf("a child before its parent: %v", err)
	}
	_, _, onChain := revalidate(g, 2, txs[:1])
	l.advance(onChain)
	if _, err := m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := m.Snapshot(); s.Len() != 1 || !s.Has(txs[1].Hash()) || m.Stats().Awaited != 1 {
		t.Fatalf("%d txs held, %d awaited; want the child, its parent on chain", s.Len(), m.Stats().Awaited)
	}
}

// A local submitter got its answer: its child before the parent is
// neither remembered nor held, and is not admitted behind its back.
func TestLocalChildDoesNotAwait(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 2)
	m := newTestMempool(t, newTestLedger(g), Options{})
	ctx := context.Background()
	if err := m.Add(ctx, txs[1]); !errors.Is(err, ledger.ErrInputNotInUTxO) || m.RecentlyRejected(txs[1].Hash()) {
		t.Fatalf("a local child before its parent: %v, remembered %v", err, m.RecentlyRejected(txs[1].Hash()))
	}
	if err := m.Add(ctx, txs[0]); err != nil || m.Snapshot().Len() != 1 {
		t.Fatalf("the parent: %v, %d held", err, m.Snapshot().Len())
	}
}

// A tx spending an output a held tx spends is a conflict: remembered, not
// awaited.
func TestConflictIsNotAwaited(t *testing.T) {
	w := newWallet(3)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	m := newTestMempool(t, newTestLedger(g), Options{})
	ctx := context.Background()
	if err := m.Add(ctx, w.spend(t, in, g[in])); err != nil {
		t.Fatal(err)
	}
	double := w.pay(t, in, g[in], 0, 2, 5_000_000)
	if err := m.Add(ctx, double); !errors.Is(err, ledger.ErrInputNotInUTxO) || !m.RecentlyRejected(double.Hash()) {
		t.Fatalf("a double spend: %v, remembered %v", err, m.RecentlyRejected(double.Hash()))
	}
}

func TestNewNeedsLedger(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without TipLedger succeeded")
	}
}

func TestChangedWakesOnPublish(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in0 := ledger.GenesisTxIn(w.addrs[0])
	m := newTestMempool(t, newTestLedger(g), Options{})
	changed := m.Changed()
	select {
	case <-changed:
		t.Fatal("Changed closed before any publish")
	default:
	}
	mustAdd(t, m, w.spend(t, in0, g[in0]))
	select {
	case <-changed:
	default:
		t.Fatal("Changed not closed by an add")
	}
	if m.Changed() == changed {
		t.Fatal("Changed not replaced after a publish")
	}
}

// TestTxIDs: a held tx is found by its tx id (the hash of its body), and
// every error names a tx by its id, never by the hash of the whole tx.
func TestTxIDs(t *testing.T) {
	w := newWallet(2)
	g := w.genesis()
	in0 := ledger.GenesisTxIn(w.addrs[0])
	first := w.spend(t, in0, g[in0])
	// The same body with a second witness: the same tx id, another tx hash.
	twin, err := ledger.BuildTx(first.Inputs, first.Outputs, first.Fee, nil, []ed25519.PrivateKey{w.keys[0], w.keys[1]})
	if err != nil {
		t.Fatal(err)
	}
	if twin.ID() != first.ID() || twin.Hash() == first.Hash() {
		t.Fatal("the twin does not share the tx id alone")
	}
	m := newTestMempool(t, newTestLedger(g), Options{})
	mustAdd(t, m, first)

	s := m.Snapshot()
	if e, ok := s.LookupID(first.ID()); !ok || e.Tx != first {
		t.Fatalf("LookupID(tx id) = %v, %v", e.Tx, ok)
	}
	if _, ok := s.LookupID(first.Hash()); ok {
		t.Fatal("LookupID found the tx by the hash of the whole tx")
	}
	if _, ok := s.Lookup(first.ID()); ok {
		t.Fatal("Lookup (by tx hash) found the tx by its tx id")
	}

	id, hash := block.Hash(first.ID()).String(), block.Hash(first.Hash()).String()
	for _, tc := range []struct {
		name string
		tx   *ledger.Tx
		is   func(error) bool
	}{
		{"duplicate", first, func(err error) bool { return errors.Is(err, ErrDuplicate) }},
		{"same body, other witnesses", twin, IsRejection},
	} {
		err := m.Add(context.Background(), tc.tx)
		if err == nil || !tc.is(err) || !strings.Contains(err.Error(), id) || strings.Contains(err.Error(), hash) ||
			strings.Contains(err.Error(), block.Hash(tc.tx.Hash()).String()) {
			t.Errorf("%s: %v; want an error naming tx id %s and no tx hash", tc.name, err, id)
		}
	}
	small := newTestMempool(t, newTestLedger(g), Options{CapacityBytes: first.Size() - 1})
	if err := small.Add(context.Background(), first); !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), id) {
		t.Errorf("too large: %v; want ErrFull naming tx id %s", err, id)
	}

	if _, err := m.RemoveTxs(context.Background(), []block.Hash{first.Hash()}); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Snapshot().LookupID(first.ID()); ok {
		t.Fatal("LookupID finds a removed tx")
	}
	if _, ok := s.LookupID(first.ID()); !ok {
		t.Fatal("the old snapshot lost the tx")
	}
}

// Each tx keeps the time it was admitted (Options.Now) across syncs, on
// either path, and removals; OldestAdmitted is the first tx's.
func TestAdmissionTimeIsKept(t *testing.T) {
	for _, extending := range []bool{false, true} {
		t.Run(fmt.Sprintf("extension views %v", extending), func(t *testing.T) {
			w := newWallet(2)
			g := w.genesis()
			in0, in1 := ledger.GenesisTxIn(w.addrs[0]), ledger.GenesisTxIn(w.addrs[1])
			a, b := w.chain(t, in0, g[in0], 2), w.chain(t, in1, g[in1], 2)
			l := newTestLedger(g)
			if extending {
				l = newExtendingLedger(g)
			}
			var clock atomic.Int64
			m := newTestMempool(t, l, Options{Now: func() time.Time { return time.Unix(0, clock.Add(10)) }})
			if _, ok := m.Snapshot().OldestAdmitted(); ok {
				t.Fatal("an empty mempool has an oldest tx")
			}
			mustAdd(t, m, a[0], b[0], a[1], b[1]) // admitted at 10, 20, 30, 40
			at := func(tx *ledger.Tx) int64 {
				e, ok := m.Snapshot().Lookup(tx.Hash())
				if !ok {
					t.Fatalf("tx %s not held", block.Hash(tx.Hash()).Short())
				}
				return e.Admitted.UnixNano()
			}
			oldest := func() int64 {
				o, ok := m.Snapshot().OldestAdmitted()
				if !ok {
					t.Fatal("no oldest tx")
				}
				return o.UnixNano()
			}
			if oldest() != 10 || at(b[1]) != 40 {
				t.Fatalf("oldest %d, b[1] at %d", oldest(), at(b[1]))
			}
			_, _, u := revalidate(g, 0, a[:1]) // the block holds a[0]
			l.advance(u)
			mustSync(t, m)
			if oldest() != 20 || at(a[1]) != 30 || at(b[1]) != 40 {
				t.Fatalf("after the sync: oldest %d, a[1] at %d, b[1] at %d", oldest(), at(a[1]), at(b[1]))
			}
			if _, err := m.RemoveTxs(context.Background(), []block.Hash{b[0].Hash()}); err != nil {
				t.Fatal(err)
			}
			if oldest() != 30 || m.Snapshot().Len() != 1 {
				t.Fatalf("after the removal: oldest %d, %d txs", oldest(), m.Snapshot().Len())
			}
		})
	}
}
