package chaindb

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// ledgerMachine is a state-machine test of the LedgerDB against an in-memory
// model: every generated block's UTxO is replayed into a plain map from its
// parent's, so the model of any chain is the map of its last block.
type ledgerMachine struct {
	k       int
	genesis ledger.MapUTxO
	fs      vfs.FS
	db      *DB
	forger  *forger

	utxoAfter map[block.Hash]ledger.MapUTxO // model UTxO after each generated valid block
	txsAfter  map[block.Hash]uint64         // model count of txs from origin through each valid block
	recent    []ledger.TxIn                 // the outputs created last (spent or not), newest last
	held      []heldView                    // views kept open across later actions
}

// maxHeldViews bounds the views held at once; holding one more closes the oldest.
const maxHeldViews = 3

// keysToCheck are the keys a view is compared with the model on: all of the
// model's (present, with their values) and the recently created ones (so an
// output spent or rolled back but still visible is caught).
func (m *ledgerMachine) keysToCheck(model ledger.MapUTxO) map[ledger.TxIn]struct{} {
	keys := keysOf(model)
	for _, in := range m.recent {
		keys[in] = struct{}{}
	}
	return keys
}

type heldView struct {
	view  *LedgerView
	tip   block.Tip
	model ledger.MapUTxO
}

func (m *ledgerMachine) modelAt(tip block.Tip) ledger.MapUTxO {
	if tip.Point.IsOrigin() {
		return m.genesis
	}
	return m.utxoAfter[tip.Point.Hash]
}

// genTxs draws txs valid on utxo: each spends one or two outputs and makes
// one to three; or, if bad, one that spends a missing output.
func (m *ledgerMachine) genTxs(t *rapid.T, utxo ledger.MapUTxO, bad bool) []testTx {
	if bad {
		return []testTx{{Spend: []ledger.TxIn{{TxID: [32]byte{0xba, 0xd}}}, Outs: []testOut{{Coin: 1}}}}
	}
	avail := make([]ledger.TxIn, 0, len(utxo))
	for in := range utxo {
		avail = append(avail, in)
	}
	slices.SortFunc(avail, func(a, b ledger.TxIn) int { ka, kb := a.Key(), b.Key(); return bytes.Compare(ka[:], kb[:]) })
	var txs []testTx
	for range rapid.IntRange(0, 2).Draw(t, "txs") {
		if len(avail) == 0 {
			break
		}
		var tx testTx
		for range rapid.IntRange(1, min(2, len(avail))).Draw(t, "spends") {
			j := rapid.IntRange(0, len(avail)-1).Draw(t, "spend")
			tx.Spend = append(tx.Spend, avail[j])
			avail = slices.Delete(avail, j, j+1)
		}
		for range rapid.IntRange(1, 3).Draw(t, "outs") {
			tx.Outs = append(tx.Outs, testOut{Addr: []byte{byte(len(tx.Outs))}, Coin: rapid.Uint64Range(1, 1e6).Draw(t, "coin")})
		}
		txs = append(txs, tx)
	}
	return txs
}

// addChain adds n blocks after parent (nil: origin), the last possibly bad.
func (m *ledgerMachine) addChain(t *rapid.T, parent *block.Header, n int) {
	utxo, txs := m.genesis, uint64(0)
	if parent != nil {
		utxo, txs = m.utxoAfter[parent.Hash()], m.txsAfter[parent.Hash()]
	}
	for i := range n {
		bad := i == n-1 && rapid.IntRange(0, 9).Draw(t, "bad") == 0
		blk := m.forger.next(parent, 1, m.genTxs(t, utxo, bad)...)
		if !bad {
			var err error
			if utxo, err = applyToMap(utxo, blk); err != nil {
				t.Fatalf("model: %v", err)
			}
			txs += uint64(len(blk.Body.Txs))
			m.utxoAfter[blk.Hash()], m.txsAfter[blk.Hash()] = utxo, txs
		}
		for _, tx := range m.genTxsOf(blk) {
			m.recent = append(m.recent, tx)
		}
		if over := len(m.recent) - 32; over > 0 {
			m.recent = m.recent[over:]
		}
		// A bad block is refused if it would be selected, else stored unvalidated.
		if _, err := m.db.AddBlock(blk); err != nil && !(bad && errors.Is(err, ErrInvalidBlock)) {
			t.Fatalf("AddBlock(#%d, bad=%v) = %v", blk.Header.BlockNumber, bad, err)
		}
		parent = blk.Header
	}
}

// volatilePoint draws a block of the selected chain from the immutable tip on.
func (m *ledgerMachine) volatileBlock(t *rapid.T) *block.Header {
	tip, imm := m.db.Tip(), m.db.ImmutableTip()
	n := rapid.Uint64Range(imm.BlockNumber, tip.BlockNumber).Draw(t, "at")
	if n == 0 {
		return nil
	}
	b, err := m.db.BlockByNumber(n)
	if err != nil {
		t.Fatal(err)
	}
	return b.Header
}

// genTxsOf lists the outputs blk's txs create.
func (m *ledgerMachine) genTxsOf(blk *block.Block) []ledger.TxIn {
	var out []ledger.TxIn
	for _, raw := range blk.Body.Txs {
		var tx testTx
		if err := block.Unmarshal(raw, &tx); err != nil {
			panic(err)
		}
		for j := range tx.Outs {
			out = append(out, ledger.TxIn{TxID: block.HashBytes(raw), Index: uint32(j)})
		}
	}
	return out
}

func (m *ledgerMachine) extend(t *rapid.T) {
	tip := m.db.Tip()
	var parent *block.Header
	if !tip.Point.IsOrigin() {
		b, err := m.db.Block(tip.Point.Hash)
		if err != nil {
			t.Fatal(err)
		}
		parent = b.Header
	}
	m.addChain(t, parent, rapid.IntRange(1, 3).Draw(t, "length"))
}

// fork grows a fork off a volatile block, long enough to win or not.
func (m *ledgerMachine) fork(t *rapid.T) {
	from := m.volatileBlock(t)
	depth := m.db.Tip().BlockNumber
	if from != nil {
		depth -= from.BlockNumber
	}
	m.addChain(t, from, int(depth)+rapid.IntRange(0, 2).Draw(t, "lead"))
}

func (m *ledgerMachine) holdView(t *rapid.T) {
	h := m.volatileBlock(t)
	p, tip := block.Origin, block.Tip{Point: block.Origin}
	if h != nil {
		p, tip = h.Point(), block.Tip{Point: h.Point(), BlockNumber: h.BlockNumber}
	}
	view, err := m.db.LedgerAt(p)
	if err != nil {
		t.Fatalf("LedgerAt(%s): %v", p, err)
	}
	m.held = append(m.held, heldView{view: view, tip: tip, model: m.modelAt(tip)})
	if len(m.held) > maxHeldViews {
		m.held[0].view.Close()
		m.held = m.held[1:]
	}
}

func (m *ledgerMachine) dropView(t *rapid.T) {
	if len(m.held) == 0 {
		t.Skip("no view held")
	}
	i := rapid.IntRange(0, len(m.held)-1).Draw(t, "view")
	m.held[i].view.Close()
	m.held = slices.Delete(m.held, i, i+1)
}

func (m *ledgerMachine) reopen(t *rapid.T) {
	tip := m.db.Tip()
	if err := m.db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, h := range m.held {
		if _, _, err := h.view.Lookup(ledger.TxIn{}); err == nil {
			t.Fatal("a view still reads after its database closed")
		}
	}
	m.held = nil
	m.db = mustOpen(t, "db", testOptions(m.k, m.genesis, m.fs))
	if m.db.Tip() != tip {
		t.Fatalf("reopened at %s, closed at %s", m.db.Tip(), tip)
	}
	checkChain(t, m.db)
}

// check: the views held see what they saw when taken; the tip's view is
// the model of the selected chain, and so is the count of its txs; the
// backing store holds exactly the model at the immutable tip. Each of
// those views lists every address's outputs as a scan of its model does,
// and the backing store's address index is exactly its outputs.
func (m *ledgerMachine) check(t *rapid.T) {
	for _, h := range m.held {
		checkLedger(t, h.view, h.model, m.keysToCheck(h.model))
		checkAddresses(t, h.view, h.model)
	}
	view, tip := m.db.TipLedger()
	defer view.Close()
	checkLedger(t, view, m.modelAt(tip), m.keysToCheck(m.modelAt(tip)))
	checkAddresses(t, view, m.modelAt(tip))
	for _, h := range m.held {
		m.checkSpentSince(t, view, tip, h.tip)
	}
	if got, want := m.db.TxsOnChain(), m.txsAfter[tip.Point.Hash]; got != want {
		t.Fatalf("%d txs on chain at %s, model %d", got, tip, want)
	}

	imm := m.db.ImmutableTip()
	atImm, err := m.db.LedgerAt(imm.Point)
	if err != nil {
		t.Fatal(err)
	}
	defer atImm.Close()
	model := m.modelAt(imm)
	checkLedger(t, atImm, model, m.keysToCheck(model))
	checkAddresses(t, atImm, model)
	checkIndex(t, m.db)
	if keys := backingKeys(t, m.db); len(keys) != len(model) {
		t.Fatalf("backing store has %d outputs, the model at the immutable tip %s has %d", len(keys), imm, len(model))
	}
	if want := tip.BlockNumber - min(tip.BlockNumber, uint64(m.k)); imm.BlockNumber != want {
		t.Fatalf("immutable tip %s with tip %s, k %d", imm, tip, m.k)
	}
}

// checkSpentSince checks the tip's view's SpentSince(p.Point) against the
// model: it answers iff p is on the selected chain at or after the
// immutable tip, and then says spent exactly for the outputs unspent at p
// and not at the tip.
func (m *ledgerMachine) checkSpentSince(t *rapid.T, view *LedgerView, tip, p block.Tip) {
	imm := m.db.ImmutableTip()
	onChain := p.Point.IsOrigin()
	if b, err := m.db.BlockByNumber(p.BlockNumber); err == nil {
		onChain = b.Point() == p.Point
	}
	spent, ok := view.SpentSince(p.Point)
	if want := onChain && p.BlockNumber >= imm.BlockNumber; ok != want {
		t.Fatalf("SpentSince(%s) at %s: ok %v, want %v (immutable tip %s)", p, tip, ok, want, imm)
	}
	if !ok {
		return
	}
	atTip := m.modelAt(tip)
	for in := range m.modelAt(p) {
		if _, still := atTip[in]; spent(in) == still {
			t.Fatalf("SpentSince(%s) at %s: spent(%s) = %v, unspent at the tip %v", p, tip, in, spent(in), still)
		}
	}
}

func TestLedgerDBModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &ledgerMachine{
			k:         rapid.IntRange(1, 4).Draw(t, "k"),
			genesis:   testGenesis(rapid.IntRange(1, 6).Draw(t, "genesis")),
			fs:        vfs.NewMem(),
			forger:    newForger(),
			utxoAfter: map[block.Hash]ledger.MapUTxO{},
			txsAfter:  map[block.Hash]uint64{},
		}
		m.db = mustOpen(t, "db", testOptions(m.k, m.genesis, m.fs))
		defer func() {
			checkChain(t, m.db)
			m.db.Close()
		}()
		t.Repeat(map[string]func(*rapid.T){
			"extend":   m.extend,
			"fork":     m.fork,
			"holdView": m.holdView,
			"dropView": m.dropView,
			"reopen":   m.reopen,
			"":         m.check,
		})
	})
}
