package chaindb

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/ledger"
)

// addressUTxOs lists view's outputs of address.
func addressUTxOs(t rapid.TB, view *LedgerView, address []byte) []AddressUTxO {
	t.Helper()
	var got []AddressUTxO
	if err := view.AddressUTxOs(address, func(u AddressUTxO) bool { got = append(got, u); return true }); err != nil {
		t.Fatalf("AddressUTxOs(%x) at %s: %v", address, view.Point(), err)
	}
	return got
}

// modelAddressUTxOs is the scan the index stands for: model's outputs of
// address, in TxIn key order.
func modelAddressUTxOs(model ledger.MapUTxO, address []byte) []AddressUTxO {
	var want []AddressUTxO
	for in, out := range model {
		if string(out.Address) == string(address) {
			want = append(want, AddressUTxO{In: in, Coin: out.Coin})
		}
	}
	slices.SortFunc(want, func(a, b AddressUTxO) int { return compareTxIn(a.In, b.In) })
	return want
}

// checkAddresses: for every address of model, and a few others, the view
// lists exactly the model's outputs of the address, in order.
func checkAddresses(t rapid.TB, view *LedgerView, model ledger.MapUTxO) {
	t.Helper()
	addresses := map[string]bool{"": true, "nobody": true}
	for i := range 8 {
		addresses[string([]byte{byte(i)})] = true
	}
	for _, out := range model {
		addresses[string(out.Address)] = true
	}
	for address := range addresses {
		got, want := addressUTxOs(t, view, []byte(address)), modelAddressUTxOs(model, []byte(address))
		if !slices.Equal(got, want) {
			t.Fatalf("outputs of address %x at %s: %v, a scan of the model: %v", address, view.Point(), got, want)
		}
	}
}

// checkIndex: the backing store's address index is exactly its outputs.
func checkIndex(t rapid.TB, db *DB) {
	t.Helper()
	db.mu.RLock()
	defer db.mu.RUnlock()
	if err := db.checkAddressIndex(); err != nil {
		t.Fatalf("address index: %v", err)
	}
}

// TestAddressUTxOs: an address's outputs come from the backing store and
// from the volatile blocks, less what later blocks spent, in TxIn order;
// an address that is a prefix of another is listed apart; yield can stop
// the listing; a rollback takes back what the abandoned blocks did.
func TestAddressUTxOs(t *testing.T) {
	const k = 2
	genesis := ledger.MapUTxO{
		{TxID: [32]byte{0xee}, Index: 0}: {Address: []byte("a"), Coin: 10},
		{TxID: [32]byte{0xee}, Index: 1}: {Address: []byte("aa"), Coin: 11},
		{TxID: [32]byte{0xee}, Index: 2}: {Address: []byte("a"), Coin: 12},
	}
	db := mustOpen(t, "db", testOptions(k, genesis, vfs.NewMem()))
	defer db.Close()
	f := newForger()
	pay := func(spend ledger.TxIn, to string, coin uint64) testTx {
		return testTx{Spend: []ledger.TxIn{spend}, Outs: []testOut{{Addr: []byte(to), Coin: coin}, {Addr: []byte("aa"), Coin: 1}}}
	}
	b1 := f.next(nil, 1, pay(ledger.TxIn{TxID: [32]byte{0xee}, Index: 0}, "a", 20)) // spends a's first, pays a again
	tx1 := block.HashBytes(b1.Body.Txs[0])
	b2 := f.next(b1.Header, 1, pay(ledger.TxIn{TxID: tx1, Index: 0}, "b", 30)) // spends that, pays b
	mustAdd(t, db, b1, b2)

	view, _ := db.TipLedger()
	model := replay(t, genesis, []*block.Block{b1, b2})
	checkAddresses(t, view, model)
	if got := addressUTxOs(t, view, []byte("a")); len(got) != 1 || got[0].Coin != 12 {
		t.Fatalf("a holds %v, want the genesis output of 12 alone", got)
	}
	if got := addressUTxOs(t, view, []byte("aa")); len(got) != 3 {
		t.Fatalf("aa holds %v, want 3 outputs (a's outputs are not aa's)", got)
	}
	var first []AddressUTxO
	if err := view.AddressUTxOs([]byte("aa"), func(u AddressUTxO) bool { first = append(first, u); return false }); err != nil || len(first) != 1 {
		t.Fatalf("a listing stopped after one: %v %v", first, err)
	}
	view.Close()
	if err := view.AddressUTxOs([]byte("a"), func(AddressUTxO) bool { return true }); !errors.Is(err, ErrClosed) {
		t.Fatalf("a closed view listed: %v", err)
	}

	// A longer fork from b1 abandons b2: b's output goes, a's comes back.
	fork := f.chain(b1.Header, 2)
	mustAdd(t, db, fork...)
	view, _ = db.TipLedger()
	defer view.Close()
	chain := append([]*block.Block{b1}, fork...)
	checkAddresses(t, view, replay(t, genesis, chain))
	if got := addressUTxOs(t, view, []byte("b")); len(got) != 0 {
		t.Fatalf("b holds %v after the rollback of the block that paid it", got)
	}
	// b1 is immutable now: its outputs are read from the backing store.
	if db.ImmutableTip().BlockNumber != 1 {
		t.Fatalf("immutable tip %s, want #1", db.ImmutableTip())
	}
	checkIndex(t, db)
}

// TestAddressIndexBuiltAtOpen: a database written before the address
// index existed (no index, no marker) gets it built at Open, and Check
// then passes it; Check refuses an index that lacks an output, holds one
// too many, or is missing.
func TestAddressIndexBuiltAtOpen(t *testing.T) {
	const k = 2
	fs := vfs.NewMem()
	opts := testOptions(k, testGenesis(4), fs)
	db := mustOpen(t, "db", opts)
	f := newForger()
	spend := ledger.TxIn{TxID: [32]byte{0xee}, Index: 1}
	b1 := f.next(nil, 1, testTx{Spend: []ledger.TxIn{spend}, Outs: []testOut{{Addr: []byte{9}, Coin: 5}}})
	chain := append([]*block.Block{b1}, f.chain(b1.Header, 4)...)
	mustAdd(t, db, chain...)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	raw := func(edit func(p *pebble.DB) error) {
		t.Helper()
		p, err := pebble.Open("db", &pebble.Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := edit(p); err != nil {
			t.Fatal(err)
		}
	}
	dropIndex := func(p *pebble.DB) error {
		b := p.NewBatch()
		if err := b.DeleteRange([]byte{prefixAddress}, []byte{prefixAddress + 1}, nil); err != nil {
			return err
		}
		if err := b.Delete(keyAddressIndex, nil); err != nil {
			return err
		}
		return b.Commit(pebble.Sync)
	}
	raw(dropIndex)
	if err := Check("db", opts); !errors.Is(err, errNoAddressIndex) || errors.Is(err, pebblestore.ErrCorrupt) {
		t.Fatalf("Check of a database without the index: %v, want a word to start the node, not corrupt", err)
	}
	db = mustOpen(t, "db", opts)
	view, _ := db.TipLedger()
	checkAddresses(t, view, replay(t, opts.GenesisUTxO, chain))
	view.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check("db", opts); err != nil {
		t.Fatalf("Check after the index was built: %v", err)
	}

	paid := ledger.TxIn{TxID: block.HashBytes(b1.Body.Txs[0])}
	raw(func(p *pebble.DB) error { return p.Delete(addressKey([]byte{9}, paid), pebble.Sync) })
	if err := Check("db", opts); err == nil || !strings.Contains(err.Error(), "the address index lacks output "+paid.String()) {
		t.Fatalf("Check of an index without an output: %v", err)
	}
	raw(func(p *pebble.DB) error { return p.Set(addressKey([]byte{9}, paid), encodeCoin(6), pebble.Sync) })
	if err := Check("db", opts); err == nil || !strings.Contains(err.Error(), "coin") {
		t.Fatalf("Check of an index with the wrong coin: %v", err)
	}
	raw(func(p *pebble.DB) error {
		if err := p.Set(addressKey([]byte{9}, paid), encodeCoin(5), nil); err != nil {
			return err
		}
		return p.Set(addressKey([]byte{9}, spend), encodeCoin(5), pebble.Sync) // spent by b1
	})
	if err := Check("db", opts); err == nil || !strings.Contains(err.Error(), "entries for") {
		t.Fatalf("Check of an index with a spent output: %v", err)
	}
}

func TestAddressKey(t *testing.T) {
	in := ledger.TxIn{TxID: [32]byte{1, 2, 3}, Index: 7}
	for _, address := range [][]byte{nil, {0x60}, make([]byte, 57), make([]byte, 300)} {
		got, gotIn, err := parseAddressKey(addressKey(address, in))
		if err != nil || string(got) != string(address) || gotIn != in {
			t.Fatalf("round trip of a %d-byte address: %x %v %v", len(address), got, gotIn, err)
		}
	}
	for _, bad := range [][]byte{nil, {'u'}, {prefixAddress}, {prefixAddress, 2, 0x60}, append(addressKey([]byte{1}, in), 0)} {
		if _, _, err := parseAddressKey(bad); err == nil {
			t.Errorf("parsed %x", bad)
		}
	}
	if got := prefixEnd([]byte{prefixAddress, 1, 0xff}); string(got) != string([]byte{prefixAddress, 2}) {
		t.Errorf("prefixEnd = %x", got)
	}
}
