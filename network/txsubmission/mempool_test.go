package txsubmission_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

var params = ledger.DefaultParams()

// errDuplicate is the test mempool's answer to a tx it holds already.
var errDuplicate = errors.New("test mempool: tx already held")

// memMempool is a real, small mempool for the tests: txs in ticket order,
// each fully validated (ledger.Apply, signatures included) against the UTxO
// after the ones before it.
type memMempool struct {
	// unchecked admits every tx that decodes, without the rules: the
	// mempool of a broken peer, which then serves invalid txs.
	unchecked bool
	// afterWalk, if set, runs after each TxsAfter with what it found: a
	// block taking txs right after a client's walk.
	afterWalk func(found []txsubmission.MempoolTx)

	mu       sync.Mutex // guards the fields below; never held across a wait
	utxo     ledger.MapUTxO
	txs      []txsubmission.MempoolTx // ticket order
	held     map[block.Hash]int       // position in txs
	rejected map[block.Hash]bool
	changed  chan struct{}
	lookups  map[block.Hash]int // how often each tx was served
	ticket   uint64             // the last ticket issued
	batches  []int              // the size of each AddTxs call's batch
}

func newMempool(genesis ledger.MapUTxO) *memMempool {
	utxo := make(ledger.MapUTxO, len(genesis))
	for in, out := range genesis {
		utxo[in] = out
	}
	return &memMempool{
		utxo:     utxo,
		held:     make(map[block.Hash]int),
		rejected: make(map[block.Hash]bool),
		changed:  make(chan struct{}),
		lookups:  make(map[block.Hash]int),
	}
}

func (m *memMempool) TxsAfter(dst []txsubmission.MempoolTx, after uint64, max int) []txsubmission.MempoolTx {
	m.mu.Lock()
	i := sort.Search(len(m.txs), func(i int) bool { return m.txs[i].Ticket > after })
	n := len(dst)
	dst = append(dst, m.txs[i:min(len(m.txs), i+max)]...)
	m.mu.Unlock()
	if m.afterWalk != nil {
		m.afterWalk(dst[n:])
	}
	return dst
}

func (m *memMempool) Lookup(h block.Hash) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.held[h]
	if !ok {
		return nil, false
	}
	m.lookups[h]++
	return m.txs[i].Bytes, true
}

func (m *memMempool) Has(h block.Hash) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.held[h]
	return ok
}

func (m *memMempool) RecentlyRejected(h block.Hash) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rejected[h]
}

func (m *memMempool) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// AddTxs adds the txs one by one, recording the batch.
func (m *memMempool) AddTxs(ctx context.Context, raws [][]byte) []error {
	m.mu.Lock()
	m.batches = append(m.batches, len(raws))
	m.mu.Unlock()
	errs := make([]error, len(raws))
	for i, raw := range raws {
		errs[i] = m.Add(ctx, raw)
	}
	return errs
}

// addTxsCalls returns the size of each AddTxs call's batch, in call order.
func (m *memMempool) addTxsCalls() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.batches)
}

func (m *memMempool) Add(_ context.Context, raw []byte) error {
	tx, err := ledger.DecodeTx(raw)
	if err != nil {
		return fmt.Errorf("test mempool: %w", err)
	}
	h := block.Hash(tx.Hash())
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.held[h]; ok {
		return errDuplicate
	}
	var diff *ledger.Diff
	if m.unchecked {
		diff = ledger.NewDiff()
	} else if diff, err = ledger.Apply(params, m.utxo, 0, tx); err != nil {
		m.rejected[h] = true
		return fmt.Errorf("test mempool: tx %s: %w", h.Short(), err)
	}
	for in := range diff.Deletes {
		delete(m.utxo, in)
	}
	for in, out := range diff.Inserts {
		m.utxo[in] = out
	}
	m.held[h] = len(m.txs)
	m.ticket++
	m.txs = append(m.txs, txsubmission.MempoolTx{Ticket: m.ticket, Hash: h, Bytes: tx.Bytes(), Size: tx.Size()})
	close(m.changed)
	m.changed = make(chan struct{})
	return nil
}

// mustAdd adds txs that must be valid.
func (m *memMempool) mustAdd(t *testing.T, txs ...*ledger.Tx) {
	t.Helper()
	for _, tx := range txs {
		if err := m.Add(context.Background(), tx.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

func (m *memMempool) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.txs)
}

// served is how often Lookup returned h.
func (m *memMempool) served(h block.Hash) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lookups[h]
}

// holdsAll reports whether m holds every tx.
func (m *memMempool) holdsAll(txs []*ledger.Tx) bool {
	for _, tx := range txs {
		if !m.Has(tx.Hash()) {
			return false
		}
	}
	return true
}

// wallet is a set of keys funded at genesis; each key spends its funds in
// a chain of txs (each spending the previous one's change), so txs of
// different keys never conflict and each tx depends on the one before.
type wallet struct {
	keys []ed25519.PrivateKey
	next []ledger.TxIn // each key's unspent output
	coin []uint64
}

const genesisCoin = 10_000_000_000

func newWallet(n int) *wallet {
	w := &wallet{}
	for i := range n {
		seed := make([]byte, ed25519.SeedSize)
		seed[0], seed[1] = byte(i), 0x7e
		key := ed25519.NewKeyFromSeed(seed)
		w.keys = append(w.keys, key)
		w.next = append(w.next, ledger.GenesisTxIn(w.addr(i)))
		w.coin = append(w.coin, genesisCoin)
	}
	return w
}

func (w *wallet) addr(i int) []byte {
	return ledger.EnterpriseAddress(0, ledger.KeyHash(w.keys[i].Public().(ed25519.PublicKey)))
}

func (w *wallet) genesis() ledger.MapUTxO {
	g := make(ledger.MapUTxO)
	for i := range w.keys {
		g[ledger.GenesisTxIn(w.addr(i))] = ledger.TxOut{Address: w.addr(i), Coin: genesisCoin}
	}
	return g
}

// txs returns the next n txs of key i's chain.
func (w *wallet) txs(t testing.TB, i, n int) []*ledger.Tx {
	t.Helper()
	var out []*ledger.Tx
	for range n {
		tx, err := ledger.BuildPayment(params, []ledger.TxIn{w.next[i]}, w.coin[i], nil, w.addr(i), nil, []ed25519.PrivateKey{w.keys[i]})
		if err != nil {
			t.Fatal(err)
		}
		w.next[i] = ledger.TxIn{TxID: tx.ID(), Index: 0}
		w.coin[i] = tx.Outputs[0].Coin
		out = append(out, tx)
	}
	return out
}

// forged returns n distinct txs spending key i's genesis funds but signed
// by another key: invalid whatever the ledger state (missing witness).
func (w *wallet) forged(t testing.TB, i, n int) []*ledger.Tx {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 0xff
	thief := ed25519.NewKeyFromSeed(seed)
	var out []*ledger.Tx
	for k := range n {
		ttl := uint64(1_000_000 + k) // only to make each tx distinct
		tx, err := ledger.BuildPayment(params, []ledger.TxIn{ledger.GenesisTxIn(w.addr(i))}, genesisCoin, nil, w.addr(i), &ttl, []ed25519.PrivateKey{thief})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tx)
	}
	return out
}

func hashes(txs []*ledger.Tx) []block.Hash {
	out := make([]block.Hash, len(txs))
	for i, tx := range txs {
		out[i] = tx.Hash()
	}
	return out
}

// remove drops a tx, as a sync does when a block includes it.
func (m *memMempool) remove(h block.Hash) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.held[h]
	if !ok {
		return
	}
	m.txs = append(m.txs[:i:i], m.txs[i+1:]...)
	delete(m.held, h)
	for j := i; j < len(m.txs); j++ {
		m.held[m.txs[j].Hash] = j
	}
	close(m.changed)
	m.changed = make(chan struct{})
}
