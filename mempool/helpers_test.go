package mempool

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

var params = ledger.DefaultParams()

// genesisCoin funds each test key: enough for thousands of fees.
const genesisCoin = 10_000_000_000

// testKey is a deterministic signing key.
func testKey(i int) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	binary.BigEndian.PutUint64(seed, uint64(i)+1)
	return ed25519.NewKeyFromSeed(seed)
}

func addrOf(key ed25519.PrivateKey) []byte {
	return ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
}

// wallet is a set of keys funded at genesis.
type wallet struct {
	keys  []ed25519.PrivateKey
	addrs [][]byte
}

func newWallet(n int) *wallet {
	w := &wallet{}
	for i := range n {
		k := testKey(i)
		w.keys = append(w.keys, k)
		w.addrs = append(w.addrs, addrOf(k))
	}
	return w
}

func (w *wallet) genesis() ledger.MapUTxO {
	u := ledger.MapUTxO{}
	for _, a := range w.addrs {
		u[ledger.GenesisTxIn(a)] = ledger.TxOut{Address: a, Coin: genesisCoin}
	}
	return u
}

// keyOf returns the index of the key that owns addr.
func (w *wallet) keyOf(addr []byte) int {
	for i, a := range w.addrs {
		if string(a) == string(addr) {
			return i
		}
	}
	return -1
}

// pay builds a tx signed by signer that spends in (worth coin) and pays
// split lovelace to key to's address (0: none), the change back to the
// owner of in.
func (w *wallet) pay(t tb, in ledger.TxIn, from ledger.TxOut, signer, to int, split uint64) *ledger.Tx {
	t.Helper()
	var outs []ledger.TxOut
	if split > 0 {
		outs = append(outs, ledger.TxOut{Address: w.addrs[to], Coin: split})
	}
	tx, err := ledger.BuildPayment(params, []ledger.TxIn{in}, from.Coin, outs, from.Address, nil, []ed25519.PrivateKey{w.keys[signer]})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// spend builds a valid tx that spends in, signed by its owner, change only.
func (w *wallet) spend(t tb, in ledger.TxIn, from ledger.TxOut) *ledger.Tx {
	t.Helper()
	k := w.keyOf(from.Address)
	return w.pay(t, in, from, k, k, 0)
}

// chain builds n txs for key k, each spending the change of the one before,
// starting from in.
func (w *wallet) chain(t tb, in ledger.TxIn, from ledger.TxOut, n int) []*ledger.Tx {
	t.Helper()
	var txs []*ledger.Tx
	for range n {
		tx := w.spend(t, in, from)
		txs = append(txs, tx)
		in = ledger.TxIn{TxID: tx.ID(), Index: uint32(len(tx.Outputs) - 1)}
		from = tx.Outputs[len(tx.Outputs)-1]
	}
	return txs
}

// applyAll applies txs (reapply: no signatures) to a copy of u, skipping
// the invalid ones: the sequential model of a revalidation. It returns the
// txs kept, those dropped and the UTxO after the kept ones.
func revalidate(u ledger.MapUTxO, slot uint64, txs []*ledger.Tx) (kept, dropped []*ledger.Tx, after ledger.MapUTxO) {
	after = maps.Clone(u)
	for _, tx := range txs {
		d, err := ledger.Reapply(params, after, slot, tx)
		if err != nil {
			dropped = append(dropped, tx)
			continue
		}
		applyDiff(after, d)
		kept = append(kept, tx)
	}
	return kept, dropped, after
}

func applyDiff(u ledger.MapUTxO, d *ledger.Diff) {
	for in := range d.Deletes {
		delete(u, in)
	}
	for in, out := range d.Inserts {
		u[in] = out
	}
}

// testLedger is the ledger source of the tests: one immutable MapUTxO per
// tip. It counts the views it hands out and fails lookups on released ones,
// so a test sees the mempool read a view it gave back.
//
// With extensions set, its views are ExtensionViews: every advance extends
// the chain, and what the blocks since an earlier tip spent is what that
// tip's UTxO held and the view's does not. Without, they are plain views
// and every sync takes the full path.
type testLedger struct {
	mu         sync.Mutex
	utxo       ledger.MapUTxO // never mutated once set
	tip        block.Tip
	changed    chan struct{}
	onLookup   func() // called by every lookup of views handed out from now on
	open       atomic.Int64
	extensions bool
	history    map[block.Point]ledger.MapUTxO // the UTxO at every tip so far
}

var errReleased = errors.New("test ledger: lookup on a released view")

func newTestLedger(u ledger.MapUTxO) *testLedger {
	tip := block.Tip{Point: block.Point{Slot: 1, Hash: block.Hash{1}}, BlockNumber: 1}
	return &testLedger{utxo: u, tip: tip, changed: make(chan struct{}), history: map[block.Point]ledger.MapUTxO{tip.Point: u}}
}

// newExtendingLedger is newTestLedger whose views are ExtensionViews.
func newExtendingLedger(u ledger.MapUTxO) *testLedger {
	l := newTestLedger(u)
	l.extensions = true
	return l
}

func (l *testLedger) TipLedger() (ledger.UTxO, block.Tip, func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := &testView{utxo: l.utxo, onLookup: l.onLookup}
	l.open.Add(1)
	var once sync.Once
	release := func() {
		once.Do(func() {
			v.released.Store(true)
			l.open.Add(-1)
		})
	}
	if l.extensions {
		return &extTestView{testView: v, l: l}, l.tip, release, nil
	}
	return v, l.tip, release, nil
}

func (l *testLedger) TipChanged() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// advance moves the tip one block on, to the UTxO u.
func (l *testLedger) advance(u ledger.MapUTxO) block.Tip {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.tip.BlockNumber + 1
	var h block.Hash
	binary.BigEndian.PutUint64(h[:], n)
	l.utxo = u
	l.tip = block.Tip{Point: block.Point{Slot: l.tip.Point.Slot + 1, Hash: h}, BlockNumber: n}
	l.history[l.tip.Point] = u
	close(l.changed)
	l.changed = make(chan struct{})
	return l.tip
}

func (l *testLedger) currentTip() block.Tip {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tip
}

func (l *testLedger) current() ledger.MapUTxO {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.utxo
}

func (l *testLedger) setOnLookup(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onLookup = f
}

type testView struct {
	utxo     ledger.MapUTxO
	onLookup func()
	released atomic.Bool
}

func (v *testView) Lookup(in ledger.TxIn) (ledger.TxOut, bool, error) {
	if v.onLookup != nil {
		v.onLookup()
	}
	if v.released.Load() {
		return ledger.TxOut{}, false, errReleased
	}
	return v.utxo.Lookup(in)
}

// extTestView is a testView of an extending testLedger.
type extTestView struct {
	*testView
	l *testLedger
}

func (v *extTestView) SpentSince(p block.Point) (func(ledger.TxIn) bool, bool) {
	v.l.mu.Lock()
	then, ok := v.l.history[p]
	v.l.mu.Unlock()
	if !ok || v.released.Load() {
		return nil, false
	}
	return func(in ledger.TxIn) bool {
		_, was := then[in]
		_, is := v.utxo[in]
		return was && !is
	}, true
}

// newTestMempool returns a mempool on l; it is closed, and every view
// checked released, at the end of the test.
func newTestMempool(t tb, l *testLedger, opts Options) *Mempool {
	t.Helper()
	opts.TipLedger = l.TipLedger
	opts.TipChanged = l.TipChanged
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		if n := l.open.Load(); n != 0 {
			t.Errorf("%d ledger views never released", n)
		}
	})
	return m
}

func mustAdd(t tb, m *Mempool, txs ...*ledger.Tx) {
	t.Helper()
	for _, tx := range txs {
		if err := m.Add(context.Background(), tx); err != nil {
			t.Fatalf("add %x: %v", tx.Hash(), err)
		}
	}
}

func mustSync(t tb, m *Mempool) SyncReport {
	t.Helper()
	r, err := m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func hashes(txs []*ledger.Tx) []block.Hash {
	hs := make([]block.Hash, len(txs))
	for i, tx := range txs {
		hs[i] = tx.Hash()
	}
	return hs
}

// checkSnapshot fails unless s holds exactly want, in order, with its
// indexes and UTxO agreeing; u is the model UTxO after want, probes the
// inputs whose state is compared.
func checkSnapshot(t tb, s *Snapshot, want []*ledger.Tx, u ledger.MapUTxO, probes []ledger.TxIn) {
	t.Helper()
	checkConsistent(t, s)
	var got []block.Hash
	for e := range s.All() {
		got = append(got, e.Tx.Hash())
	}
	if w := hashes(want); !equalHashes(got, w) {
		t.Fatalf("snapshot holds %d txs %s, model %d txs %s", len(got), short(got), len(w), short(w))
	}
	view := s.UTxO()
	for _, in := range probes {
		out, ok, err := view.Lookup(in)
		if err != nil {
			t.Fatalf("snapshot UTxO lookup %s: %v", in, err)
		}
		wantOut, wantOK := u[in]
		if ok != wantOK || out.Coin != wantOut.Coin || string(out.Address) != string(wantOut.Address) {
			t.Fatalf("snapshot UTxO at %s: (%v, %v), model (%v, %v)", in, out.Coin, ok, wantOut.Coin, wantOK)
		}
	}
}

// checkConsistent checks what must hold of any snapshot on its own.
func checkConsistent(t tb, s *Snapshot) {
	t.Helper()
	if err := consistent(s); err != nil {
		t.Fatal(err)
	}
}

func equalHashes(a, b []block.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func short(hs []block.Hash) []string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.Short()
	}
	return s
}

// probesOf lists every input and output of txs and the genesis inputs.
func probesOf(u ledger.MapUTxO, txs ...[]*ledger.Tx) []ledger.TxIn {
	seen := map[ledger.TxIn]struct{}{}
	for in := range u {
		seen[in] = struct{}{}
	}
	for _, list := range txs {
		for _, tx := range list {
			for _, in := range tx.Inputs {
				seen[in] = struct{}{}
			}
			for i := range tx.Outputs {
				seen[ledger.TxIn{TxID: tx.ID(), Index: uint32(i)}] = struct{}{}
			}
		}
	}
	return slices.Collect(maps.Keys(seen))
}

// tb is what the helpers need of *testing.T and *rapid.T alike.
type tb interface {
	rapid.TB
	Cleanup(func())
}
