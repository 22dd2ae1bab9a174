package node

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// A tx-submission reply added together gives each tx the error Add gives
// it, tx by tx (a valid tx, its child, a bad signature, bytes that do not
// decode, a duplicate), and admits the same txs.
func TestTxSubmissionAddTxsIsAddOneByOne(t *testing.T) {
	p := ledger.DefaultParams()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x5a}, ed25519.SeedSize))
	addr := ledger.EnterpriseAddress(p.NetworkID, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	in := ledger.GenesisTxIn(addr)
	utxo := ledger.MapUTxO{in: {Address: addr, Coin: 1_000_000_000}}
	parent, err := ledger.BuildPayment(p, []ledger.TxIn{in}, 1_000_000_000, nil, addr, nil, []ed25519.PrivateKey{key})
	if err != nil {
		t.Fatal(err)
	}
	child, err := ledger.BuildPayment(p, []ledger.TxIn{{TxID: parent.ID()}}, parent.Outputs[0].Coin, nil, addr, nil, []ed25519.PrivateKey{key})
	if err != nil {
		t.Fatal(err)
	}
	badSig := bytes.Clone(child.Bytes())
	badSig[bytes.Index(badSig, child.Witnesses[0].Signature[:])+9] ^= 1
	raws := [][]byte{parent.Bytes(), badSig, {0x80}, child.Bytes(), parent.Bytes()}

	pool := func() txSubmissionMempool {
		m, err := mempool.New(mempool.Options{Params: p, TipLedger: func() (ledger.UTxO, block.Tip, func(), error) {
			return utxo, block.Tip{}, func() {}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		return txSubmissionMempool{m}
	}
	together, oneByOne := pool(), pool()
	ctx := context.Background()
	errs := together.AddTxs(ctx, raws)
	for i, raw := range raws {
		want := oneByOne.Add(ctx, raw)
		if (errs[i] == nil) != (want == nil) || errs[i] != nil && errs[i].Error() != want.Error() {
			t.Fatalf("tx %d: AddTxs %v, Add %v", i, errs[i], want)
		}
	}
	if !errors.Is(errs[1], ledger.ErrBadWitness) || errs[0] != nil || errs[3] != nil {
		t.Fatalf("errors %v: want the parent and the child admitted, the bad signature refused", errs)
	}
	if a, b := together.pool.Snapshot().Len(), oneByOne.pool.Snapshot().Len(); a != 2 || b != 2 {
		t.Fatalf("%d and %d txs held, want 2", a, b)
	}
}
