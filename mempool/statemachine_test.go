package mempool

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// The mempool against a sequential model: a list of txs and the UTxO at the
// tip. Sequential steps must match the model exactly; the concurrent step
// runs a sync, adders, a removal and readers at once and must end in the
// state of a sequential history of them.
func TestStateMachine(t *testing.T) {
	w := newWallet(6)
	g := w.genesis()
	rapid.Check(t, func(rt *rapid.T) {
		l := newTestLedger(g)
		if rapid.Bool().Draw(rt, "extension views") { // syncs take the extension path
			l = newExtendingLedger(g)
		}
		sm := &machine{w: w, ledger: l, utxo: g, outs: map[ledger.TxIn]ledger.TxOut(maps.Clone(g))}
		sm.m = newTestMempool(rt, sm.ledger, Options{SyncDeltaCap: 2, SyncMaxRounds: 3})
		sm.recompute(rt)
		rt.Repeat(map[string]func(*rapid.T){
			"add":             sm.add,
			"add duplicate":   sm.addDuplicate,
			"add conflict":    sm.addConflict,
			"add unwitnessed": sm.addUnwitnessed,
			"sync":            sm.sync,
			"remove":          sm.remove,
			"concurrent":      sm.concurrent,
			"":                sm.check,
		})
	})
}

type machine struct {
	w      *wallet
	ledger *testLedger
	m      *Mempool

	// The model.
	utxo  ledger.MapUTxO // at the tip
	txs   []*ledger.Tx   // held, in ticket order
	after ledger.MapUTxO // utxo after txs

	outs   map[ledger.TxIn]ledger.TxOut // every output ever built, for probes and conflicts
	probes []ledger.TxIn
}

// recompute sets the UTxO after the held txs, which must all be valid.
func (sm *machine) recompute(t *rapid.T) {
	var dropped []*ledger.Tx
	sm.txs, dropped, sm.after = revalidate(sm.utxo, 0, sm.txs)
	if len(dropped) > 0 {
		t.Fatalf("held txs %s are invalid at the tip", short(hashes(dropped)))
	}
}

func (sm *machine) built(tx *ledger.Tx) *ledger.Tx {
	for _, in := range tx.Inputs {
		sm.probes = append(sm.probes, in)
	}
	for i, out := range tx.Outputs {
		in := ledger.TxIn{TxID: tx.ID(), Index: uint32(i)}
		sm.outs[in] = out
		sm.probes = append(sm.probes, in)
	}
	return tx
}

// unspent draws an output of key k unspent in u, in a deterministic order.
func (sm *machine) unspent(t *rapid.T, u ledger.MapUTxO, k int, label string) (ledger.TxIn, ledger.TxOut, bool) {
	var ins []ledger.TxIn
	for in, out := range u {
		if bytes.Equal(out.Address, sm.w.addrs[k]) {
			ins = append(ins, in)
		}
	}
	if len(ins) == 0 {
		return ledger.TxIn{}, ledger.TxOut{}, false
	}
	slices.SortFunc(ins, compareTxIn)
	in := rapid.SampledFrom(ins).Draw(t, label)
	return in, u[in], true
}

// newTx draws a valid tx spending an output of a key unspent in u: change
// only, or a split paying another key too.
func (sm *machine) newTx(t *rapid.T, u ledger.MapUTxO, keys []int) (*ledger.Tx, bool) {
	k := rapid.SampledFrom(keys).Draw(t, "key")
	in, out, ok := sm.unspent(t, u, k, "input")
	if !ok {
		return nil, false
	}
	to := rapid.IntRange(0, len(sm.w.keys)-1).Draw(t, "pay to")
	var split uint64
	if out.Coin > 100_000_000 && rapid.Bool().Draw(t, "split") {
		split = 5_000_000
	}
	return sm.built(sm.w.pay(t, in, out, k, to, split)), true
}

func (sm *machine) allKeys() []int {
	keys := make([]int, len(sm.w.keys))
	for i := range keys {
		keys[i] = i
	}
	return keys
}

func (sm *machine) add(t *rapid.T) {
	tx, ok := sm.newTx(t, sm.after, sm.allKeys())
	if !ok {
		t.Skip("no unspent output")
	}
	if err := sm.m.Add(context.Background(), tx); err != nil {
		t.Fatalf("valid add: %v", err)
	}
	sm.txs = append(sm.txs, tx)
	sm.recompute(t)
}

func (sm *machine) addDuplicate(t *rapid.T) {
	if len(sm.txs) == 0 {
		t.Skip("empty")
	}
	tx := rapid.SampledFrom(sm.txs).Draw(t, "tx")
	if err := sm.m.Add(context.Background(), tx); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate add: %v, want ErrDuplicate", err)
	}
}

// addConflict spends again an input a held tx spends.
func (sm *machine) addConflict(t *rapid.T) {
	if len(sm.txs) == 0 {
		t.Skip("empty")
	}
	held := rapid.SampledFrom(sm.txs).Draw(t, "held")
	in := held.Inputs[0]
	out := sm.outs[in]
	far := uint64(1 << 40) // a ttl makes it differ from held
	tx, err := ledger.BuildPayment(params, []ledger.TxIn{in}, out.Coin, nil, out.Address, &far, []ed25519.PrivateKey{sm.w.keys[sm.w.keyOf(out.Address)]})
	if err != nil {
		t.Fatal(err)
	}
	sm.built(tx)
	if err := sm.m.Add(context.Background(), tx); !errors.Is(err, ledger.ErrInputNotInUTxO) {
		t.Fatalf("conflicting add: %v, want ErrInputNotInUTxO", err)
	}
	if !sm.m.RecentlyRejected(tx.Hash()) {
		t.Fatal("conflicting tx not remembered as rejected")
	}
}

func (sm *machine) addUnwitnessed(t *rapid.T) {
	k := rapid.IntRange(0, len(sm.w.keys)-1).Draw(t, "key")
	in, out, ok := sm.unspent(t, sm.after, k, "input")
	if !ok {
		t.Skip("no unspent output")
	}
	tx := sm.built(sm.w.pay(t, in, out, (k+1)%len(sm.w.keys), k, 0))
	if err := sm.m.Add(context.Background(), tx); !errors.Is(err, ledger.ErrMissingWitness) {
		t.Fatalf("unwitnessed add: %v, want ErrMissingWitness", err)
	}
	if !sm.m.RecentlyRejected(tx.Hash()) {
		t.Fatal("unwitnessed tx not remembered as rejected")
	}
}

// nextLedger draws the UTxO of a new tip: a block holding a prefix of the
// mempool, and maybe an external tx of one of keys that conflicts with it —
// or that is one of the held txs, which the block then holds out of order.
func (sm *machine) nextLedger(t *rapid.T, keys []int) (u ledger.MapUTxO, inBlock map[block.Hash]bool) {
	prefix := rapid.IntRange(0, len(sm.txs)).Draw(t, "block prefix")
	inBlock = map[block.Hash]bool{}
	for _, tx := range sm.txs[:prefix] {
		inBlock[tx.Hash()] = true
	}
	_, _, u = revalidate(sm.utxo, 0, sm.txs[:prefix])
	if len(keys) > 0 && rapid.Bool().Draw(t, "external tx") {
		if tx, ok := sm.newTx(t, u, keys); ok {
			inBlock[tx.Hash()] = true
			_, _, u = revalidate(u, 0, []*ledger.Tx{tx})
		}
	}
	return u, inBlock
}

func (sm *machine) sync(t *rapid.T) {
	u, _ := sm.nextLedger(t, sm.allKeys())
	tip := sm.ledger.advance(u)
	r, err := sm.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped, _ := revalidate(u, 0, sm.txs)
	if !r.Synced || r.Tip != tip || r.Path != sm.wantPath() || !equalHashes(r.Dropped, hashes(dropped)) {
		t.Fatalf("sync report %+v; model dropped %s, path %s", r, short(hashes(dropped)), sm.wantPath())
	}
	sm.utxo, sm.txs = u, kept
	sm.recompute(t)
}

// removal draws hashes to remove: held txs but those excluded, and one the
// mempool never saw.
func (sm *machine) removal(t *rapid.T, exclude map[block.Hash]bool) ([]block.Hash, map[block.Hash]bool) {
	named := map[block.Hash]bool{}
	hs := []block.Hash{{0xee, byte(len(sm.probes))}}
	for _, tx := range sm.txs {
		if !exclude[tx.Hash()] && rapid.IntRange(0, 2).Draw(t, "remove it") == 0 {
			named[tx.Hash()] = true
			hs = append(hs, tx.Hash())
		}
	}
	return hs, named
}

func without(txs []*ledger.Tx, named map[block.Hash]bool) []*ledger.Tx {
	var rest []*ledger.Tx
	for _, tx := range txs {
		if !named[tx.Hash()] {
			rest = append(rest, tx)
		}
	}
	return rest
}

func (sm *machine) remove(t *rapid.T) {
	hs, named := sm.removal(t, nil)
	removed, err := sm.m.RemoveTxs(context.Background(), hs)
	if err != nil {
		t.Fatal(err)
	}
	kept, _, _ := revalidate(sm.utxo, 0, without(sm.txs, named))
	var want []block.Hash // the named and their dependents, in ticket order
	for _, tx := range sm.txs {
		if !slices.Contains(kept, tx) {
			want = append(want, tx.Hash())
		}
	}
	if !equalHashes(removed, want) {
		t.Fatalf("removed %s, model %s", short(removed), short(want))
	}
	sm.txs = kept
	sm.recompute(t)
}

// concurrent runs at once: a sync to a new tip, adders each submitting a
// chain of txs, a removal, and readers checking every snapshot they load.
// Adders spend outputs of their own keys that the ledger holds and nothing
// else touches; the removal names only txs the new block does not hold
// (else whether their dependents survive depends on the order). Then
// every order of these operations ends in the same state, the model's:
// the held txs minus the named, revalidated at the new tip, followed by the
// adders' txs.
func (sm *machine) concurrent(t *rapid.T) {
	nKeys := len(sm.w.keys)
	adderKeys := rapid.IntRange(0, 2).Draw(t, "adders")
	others := make([]int, 0, nKeys)
	for k := adderKeys; k < nKeys; k++ {
		others = append(others, k)
	}
	u, inBlock := sm.nextLedger(t, others)
	hs, named := sm.removal(t, inBlock)

	// The adders' chains start at outputs the ledger holds, unspent by the
	// mempool, untouched by the new block.
	var chains [][]*ledger.Tx
	for k := range adderKeys {
		var heads []ledger.TxIn
		for in, out := range sm.utxo {
			if _, unspent := sm.after[in]; unspent && bytes.Equal(out.Address, sm.w.addrs[k]) {
				if _, still := u[in]; still {
					heads = append(heads, in)
				}
			}
		}
		if len(heads) == 0 {
			continue
		}
		slices.SortFunc(heads, compareTxIn)
		head := rapid.SampledFrom(heads).Draw(t, "chain head")
		chain := sm.w.chain(t, head, sm.utxo[head], rapid.IntRange(1, 5).Draw(t, "chain length"))
		for _, tx := range chain {
			sm.built(tx)
		}
		chains = append(chains, chain)
	}
	removeFirst := rapid.Bool().Draw(t, "removal before the tip change")

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
		stop     = make(chan struct{})
		removed  atomic.Bool // RemoveTxs has returned
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	ctx := context.Background()
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				gone := removed.Load() // before the load: the snapshot must reflect the removal
				s := sm.m.Snapshot()
				if err := consistent(s); err != nil {
					fail("reader: %v", err)
				}
				if gone {
					for h := range named {
						if s.Has(h) {
							fail("reader: removed tx %s is back", h.Short())
						}
					}
				}
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		})
	}
	if !removeFirst {
		sm.ledger.advance(u)
	}
	var report SyncReport
	var dropped []block.Hash
	wg.Go(func() {
		var err error
		if report, err = sm.m.Sync(ctx); err != nil {
			fail("sync: %v", err)
		}
	})
	wg.Go(func() {
		var err error
		if dropped, err = sm.m.RemoveTxs(ctx, hs); err != nil {
			fail("remove: %v", err)
		}
		removed.Store(true)
	})
	if removeFirst {
		sm.ledger.advance(u) // the sync may or may not see this tip
	}
	for _, chain := range chains {
		wg.Go(func() {
			for _, tx := range chain {
				if err := sm.m.Add(ctx, tx); err != nil {
					fail("adder: %v", err)
				}
			}
		})
	}
	wg.Wait()
	// A sync that ran before the tip change left the old tip; catch up.
	if _, err := sm.m.Sync(ctx); err != nil {
		fail("final sync: %v", err)
	}
	close(stop)
	readers.Wait()
	if report.Synced && report.Path != sm.wantPath() {
		failures = append(failures, fmt.Sprintf("sync took the %s path, want %s", report.Path, sm.wantPath()))
	}
	if len(failures) > 0 {
		t.Fatal(failures)
	}

	held, _, _ := revalidate(u, 0, without(sm.txs, named))
	s := sm.m.Snapshot()
	var got []*ledger.Tx
	for e := range s.All() {
		got = append(got, e.Tx)
	}
	if len(got) < len(held) || !equalHashes(hashes(got[:len(held)]), hashes(held)) {
		t.Fatalf("after the concurrent step: %s, want %s then the adders' txs\n(held before %s, named %d, removal dropped %s, sync %+v)",
			short(hashes(got)), short(hashes(held)), short(hashes(sm.txs)), len(named), short(dropped), report)
	}
	tail := got[len(held):]
	var tailWant int
	for _, chain := range chains {
		tailWant += len(chain)
		// Each adder's txs in its order.
		var pos []int
		for _, tx := range chain {
			pos = append(pos, slices.Index(tail, tx))
		}
		if slices.Contains(pos, -1) || !slices.IsSorted(pos) {
			t.Fatalf("adder's chain at positions %v of the new txs", pos)
		}
	}
	if len(tail) != tailWant {
		t.Fatalf("%d new txs, want the adders' %d", len(tail), tailWant)
	}
	sm.utxo, sm.txs = u, got
	sm.recompute(t)
}

// wantPath is the path a sync takes: every tip change extends the chain,
// so the extension path whenever the views can say what was spent.
func (sm *machine) wantPath() SyncPath {
	if sm.ledger.extensions {
		return SyncExtension
	}
	return SyncFull
}

func (sm *machine) check(t *rapid.T) {
	s := sm.m.Snapshot()
	if s.Tip() != sm.ledger.tip {
		t.Fatalf("snapshot at tip %s, ledger at %s", s.Tip(), sm.ledger.tip)
	}
	checkSnapshot(t, s, sm.txs, sm.after, sm.probes)
}

// consistent is checkConsistent for goroutines that cannot fail the test.
func consistent(s *Snapshot) (err error) {
	var prev uint64
	total, n := 0, 0
	for e := range s.All() {
		if e.Ticket <= prev {
			return fmt.Errorf("ticket %d after %d", e.Ticket, prev)
		}
		if got := s.LenAfter(e.Ticket - 1); got != s.Len()-n {
			return fmt.Errorf("LenAfter(%d) = %d; want %d", e.Ticket-1, got, s.Len()-n)
		}
		prev = e.Ticket
		if got, ok := s.Lookup(e.Tx.Hash()); !ok || got.Ticket != e.Ticket {
			return fmt.Errorf("Lookup(%x) = %d, %v; want ticket %d", e.Tx.Hash(), got.Ticket, ok, e.Ticket)
		}
		if got, ok := s.LookupID(e.Tx.ID()); !ok || got.Ticket != e.Ticket {
			return fmt.Errorf("LookupID(%x) = %d, %v; want ticket %d", e.Tx.ID(), got.Ticket, ok, e.Ticket)
		}
		total += e.Tx.Size()
		n++
	}
	if got := s.LenAfter(prev); got != 0 {
		return fmt.Errorf("LenAfter(last ticket %d) = %d; want 0", prev, got)
	}
	if total != s.Bytes() || n != s.Len() || prev != s.LastTicket() {
		return fmt.Errorf("snapshot reports %d txs, %d bytes, last ticket %d; holds %d, %d, %d", s.Len(), s.Bytes(), s.LastTicket(), n, total, prev)
	}
	return nil
}

func compareTxIn(a, b ledger.TxIn) int {
	if c := bytes.Compare(a.TxID[:], b.TxID[:]); c != 0 {
		return c
	}
	return cmp.Compare(a.Index, b.Index)
}
