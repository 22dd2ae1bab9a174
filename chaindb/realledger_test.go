package chaindb

import (
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestRealLedgerTxs runs chaindb with the real ledger rules (the txs of docs/protocol.md, "Wire formats",
// signatures checked on apply, skipped on the replay at Open): a payment is
// applied, survives a reopen, and its double spend is an invalid block.
func TestRealLedgerTxs(t *testing.T) {
	params := ledger.DefaultParams()
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	addr := ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	const funds = 10_000_000
	genesis := ledger.MapUTxO{ledger.GenesisTxIn(addr): {Address: addr, Coin: funds}}
	fs := vfs.NewMem()
	opts := Options{K: 2, GenesisUTxO: genesis, ApplyBlock: realApply(params), ValidateBlock: verifyHeader, fs: fs}
	db := mustOpen(t, "db", opts)

	tx, err := ledger.BuildPayment(params, []ledger.TxIn{ledger.GenesisTxIn(addr)}, funds,
		[]ledger.TxOut{{Address: addr, Coin: 2_000_000}}, addr, nil, []ed25519.PrivateKey{key})
	if err != nil {
		t.Fatal(err)
	}
	f := newForger()
	b1 := f.nextRaw(nil, 1, []block.RawCBOR{tx.Bytes()})
	mustAdd(t, db, b1)

	paid := ledger.TxIn{TxID: tx.ID(), Index: 0}
	check := func(db *DB) {
		t.Helper()
		view, _ := db.TipLedger()
		defer view.Close()
		if _, ok, err := view.Lookup(ledger.GenesisTxIn(addr)); ok || err != nil {
			t.Fatalf("genesis output still unspent (%v)", err)
		}
		if out, ok, err := view.Lookup(paid); !ok || err != nil || out.Coin != 2_000_000 {
			t.Fatalf("payment output: %v %v %v", out, ok, err)
		}
	}
	check(db)
	db.Close()

	db = mustOpen(t, "db", opts)
	defer db.Close()
	check(db)
	if _, err := db.AddBlock(f.nextRaw(b1.Header, 1, []block.RawCBOR{tx.Bytes()})); !errors.Is(err, ErrInvalidBlock) {
		t.Fatalf("double spend: %v", err)
	}
	// Past k: the payment is flushed to the backing store.
	mustAdd(t, db, f.chain(b1.Header, 3)...)
	check(db)
	if _, ok := backingKeys(t, db)[paid]; !ok {
		t.Fatal("the payment output is not in the backing store after the flush")
	}
}

// realApply is Options.ApplyBlock with the real ledger rules: a block's
// txs applied in order, signatures checked unless reapplying.
func realApply(params ledger.Params) func(ledger.UTxO, *block.Block, *block.Header, bool) (*ledger.Diff, error) {
	return func(utxo ledger.UTxO, blk *block.Block, _ *block.Header, reapply bool) (*ledger.Diff, error) {
		txs := make([][]byte, len(blk.Body.Txs))
		for i, tx := range blk.Body.Txs {
			txs[i] = tx
		}
		return ledger.ApplyTxs(params, utxo, blk.Header.Slot, txs, reapply)
	}
}
