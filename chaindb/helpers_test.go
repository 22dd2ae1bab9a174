package chaindb

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"pgregory.net/rapid"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// The test ledger: a block body's txs are CBOR testTx values, each spending
// outputs that must be unspent and creating outputs named (its hash, index).

type testTx struct {
	_     struct{} `cbor:",toarray"`
	Spend []ledger.TxIn
	Outs  []testOut
}

type testOut struct {
	_    struct{} `cbor:",toarray"`
	Addr []byte
	Coin uint64
}

var errMissingInput = errors.New("test ledger: input not unspent")

// testApply is Options.ApplyBlock for test blocks. It counts its calls in
// calls, if not nil, and fails a block applied on another parent than its
// predecessor.
func testApply(calls *int) func(ledger.UTxO, *block.Block, *block.Header, bool) (*ledger.Diff, error) {
	return func(utxo ledger.UTxO, blk *block.Block, parent *block.Header, reapply bool) (*ledger.Diff, error) {
		if calls != nil {
			*calls++
		}
		if (parent == nil) != (blk.Header.PrevHash == nil) || parent != nil && parent.Hash() != blk.Header.Prev() {
			return nil, fmt.Errorf("block %d applied with a parent that is not its predecessor", blk.Header.BlockNumber)
		}
		return applyTestTxs(utxo, blk)
	}
}

// applyTestTxs applies the test txs of blk to utxo.
func applyTestTxs(utxo ledger.UTxO, blk *block.Block) (*ledger.Diff, error) {
	d := ledger.NewDiff()
	view := ledger.Overlay{Base: utxo, Diffs: []*ledger.Diff{d}}
	for i, raw := range blk.Body.Txs {
		var tx testTx
		if err := block.Unmarshal(raw, &tx); err != nil {
			return nil, fmt.Errorf("tx %d: %w", i, err)
		}
		for _, in := range tx.Spend {
			spent, ok, err := view.Lookup(in)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("tx %d: %w: %s", i, errMissingInput, in)
			}
			d.Delete(in, spent)
		}
		id := block.HashBytes(raw)
		for j, out := range tx.Outs {
			in := ledger.TxIn{TxID: id, Index: uint32(j)}
			if _, ok, _ := view.Lookup(in); ok {
				return nil, fmt.Errorf("tx %d: output %s exists", i, in)
			}
			d.Insert(in, ledger.TxOut{Address: out.Addr, Coin: out.Coin})
		}
		d.Txs++
	}
	return d, nil
}

func encodeTx(tx testTx) block.RawCBOR {
	b, err := block.Marshal(tx)
	if err != nil {
		panic(err)
	}
	return b
}

// applyToMap is the model ledger: the UTxO after blk as a plain map.
func applyToMap(m ledger.MapUTxO, blk *block.Block) (ledger.MapUTxO, error) {
	d, err := applyTestTxs(m, blk)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(m)
	for in := range d.Deletes {
		delete(out, in)
	}
	maps.Copy(out, d.Inserts)
	return out, nil
}

func testGenesis(n int) ledger.MapUTxO {
	g := ledger.MapUTxO{}
	for i := range n {
		var in ledger.TxIn
		in.TxID[0] = 0xee
		in.Index = uint32(i)
		g[in] = ledger.TxOut{Address: []byte{byte(i)}, Coin: uint64(1000 + i)}
	}
	return g
}

// forger builds signed test blocks. Each block carries a fresh nonce in its
// VRF output, so blocks with the same parent, slot and body differ.
type forger struct {
	key   ed25519.PrivateKey
	nonce uint64
	// certifies, if set, says which block numbers say in their header
	// that they carry a certificate (LeiosCertified).
	certifies func(number uint64) bool
}

func newForger() *forger {
	return &forger{key: ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))}
}

// next builds the block after parent (nil: after origin), slotGap slots later.
func (f *forger) next(parent *block.Header, slotGap uint64, txs ...testTx) *block.Block {
	raws := make([]block.RawCBOR, len(txs))
	for i, tx := range txs {
		raws[i] = encodeTx(tx)
	}
	return f.nextRaw(parent, slotGap, raws)
}

// nextRaw is next for a body of raw txs.
func (f *forger) nextRaw(parent *block.Header, slotGap uint64, raws []block.RawCBOR) *block.Block {
	body := block.NewBody(raws, nil)
	f.nonce++
	hb := block.HeaderBody{
		BlockNumber: 1,
		Slot:        slotGap,
		BodySize:    uint64(len(body.Bytes())),
		BodyHash:    body.Hash(),
	}
	if parent != nil {
		ph := parent.Hash()
		hb.BlockNumber, hb.Slot, hb.PrevHash = parent.BlockNumber+1, parent.Slot+slotGap, &ph
	}
	hb.LeiosCertified = f.certifies != nil && f.certifies(hb.BlockNumber)
	copy(hb.IssuerVKey[:], f.key.Public().(ed25519.PublicKey))
	binary.BigEndian.PutUint64(hb.VRF.Output[:], f.nonce)
	return block.NewBlock(block.NewHeader(hb, f.key), body)
}

// chain builds n empty blocks after parent.
func (f *forger) chain(parent *block.Header, n int) []*block.Block {
	out := make([]*block.Block, n)
	for i := range out {
		out[i] = f.next(parent, 1)
		parent = out[i].Header
	}
	return out
}

func verifyHeader(blk *block.Block) error { return blk.Header.VerifySignature() }

// testOptions are the options of the tests: the test ledger, in-memory
// Pebble on fs (nil: a real directory).
func testOptions(k int, genesis ledger.MapUTxO, fs vfs.FS) Options {
	return Options{K: k, GenesisUTxO: genesis, ApplyBlock: testApply(nil), ValidateBlock: verifyHeader, fs: fs}
}

func mustOpen(t rapid.TB, dir string, opts Options) *DB {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func mustAdd(t rapid.TB, db *DB, blks ...*block.Block) AddResult {
	t.Helper()
	var res AddResult
	for _, b := range blks {
		var err error
		if res, err = db.AddBlock(b); err != nil {
			t.Fatalf("AddBlock(#%d %s): %v", b.Header.BlockNumber, b.Hash().Short(), err)
		}
	}
	return res
}

func tipOf(b *block.Block) block.Tip {
	return block.Tip{Point: b.Point(), BlockNumber: b.Header.BlockNumber}
}

// checkChain checks the selected chain of db: linked from origin, numbered
// 1..tip, ending at the tip, and the immutable tip K behind (or origin). It
// returns the chain's blocks.
func checkChain(t rapid.TB, db *DB) []*block.Block {
	t.Helper()
	tip := db.Tip()
	var chain []*block.Block
	prev := block.Hash{}
	for n := uint64(1); n <= tip.BlockNumber; n++ {
		b, err := db.BlockByNumber(n)
		if err != nil {
			t.Fatalf("BlockByNumber(%d) with tip %s: %v", n, tip, err)
		}
		if b.Header.BlockNumber != n || b.Header.Prev() != prev {
			t.Fatalf("block %d: number %d, prev %s, want prev %s", n, b.Header.BlockNumber, b.Header.Prev().Short(), prev.Short())
		}
		prev = b.Hash()
		chain = append(chain, b)
	}
	if tip.BlockNumber > 0 && chain[len(chain)-1].Point() != tip.Point {
		t.Fatalf("tip %s is not the last block of the chain", tip)
	}
	want := block.Tip{Point: block.Origin}
	if k := uint64(db.opts.K); tip.BlockNumber > k {
		want = tipOf(chain[tip.BlockNumber-k-1])
	}
	if got := db.ImmutableTip(); got != want {
		t.Fatalf("immutable tip %s, want %s (tip %s, k %d)", got, want, tip, db.opts.K)
	}
	return chain
}

// checkLedger checks that view equals model on every key of universe (the
// model's keys and any other key the test knows of).
func checkLedger(t rapid.TB, view *LedgerView, model ledger.MapUTxO, universe map[ledger.TxIn]struct{}) {
	t.Helper()
	for in := range universe {
		got, ok, err := view.Lookup(in)
		if err != nil {
			t.Fatalf("Lookup(%s) at %s: %v", in, view.Point(), err)
		}
		want, wantOK := model[in]
		if ok != wantOK || (ok && (got.Coin != want.Coin || string(got.Address) != string(want.Address))) {
			t.Fatalf("Lookup(%s) at %s = %v %v, model %v %v", in, view.Point(), got, ok, want, wantOK)
		}
	}
}

// backingKeys lists the backing store's keys: with checkLedger at the
// immutable tip it shows the store holds exactly the model.
func backingKeys(t rapid.TB, db *DB) map[ledger.TxIn]struct{} {
	t.Helper()
	db.mu.RLock()
	defer db.mu.RUnlock()
	it, err := db.store.NewIter(prefixBounds(prefixUTxO))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[ledger.TxIn]struct{}{}
	for it.First(); it.Valid(); it.Next() {
		in, err := ledger.TxInFromKey(it.Key()[1:])
		if err != nil {
			t.Fatal(err)
		}
		out[in] = struct{}{}
	}
	return out
}

// txsIn is the model of the tx count: the txs in the bodies of chain.
func txsIn(chain []*block.Block) uint64 {
	var n uint64
	for _, b := range chain {
		n += uint64(len(b.Body.Txs))
	}
	return n
}

// replay is the from-scratch model: the UTxO after chain, from genesis.
func replay(t rapid.TB, genesis ledger.MapUTxO, chain []*block.Block) ledger.MapUTxO {
	t.Helper()
	m := genesis
	for _, b := range chain {
		var err error
		if m, err = applyToMap(m, b); err != nil {
			t.Fatalf("model replay of #%d: %v", b.Header.BlockNumber, err)
		}
	}
	return m
}
