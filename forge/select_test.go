package forge

import (
	"bytes"
	"crypto/ed25519"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// On a snapshot validated against the block's tip, the walk that reads no
// ledger (SelectValidTxs) picks exactly what the walk that reapplies every
// tx picks (SelectTxs), whatever a certified closure took from under the
// snapshot, whichever ttls have passed, and whatever the limits leave out.
func TestPropertySelectValidTxsAgrees(t *testing.T) {
	p := ledger.DefaultParams()
	keys := make([]ed25519.PrivateKey, 3)
	for i := range keys {
		keys[i] = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{byte(i + 1)}, 32))
	}
	addr := func(k int) []byte {
		return ledger.EnterpriseAddress(0, ledger.KeyHash(keys[k].Public().(ed25519.PublicKey)))
	}
	rapid.Check(t, func(t *rapid.T) {
		type coin struct {
			in    ledger.TxIn
			value uint64
			owner int
		}
		base := ledger.MapUTxO{}
		var unspent, baseCoins []coin
		for k := range keys {
			for j := range 2 {
				c := coin{ledger.TxIn{TxID: [32]byte{0xee, byte(k), byte(j)}}, 50_000_000_000, k}
				base[c.in] = ledger.TxOut{Address: addr(k), Coin: c.value}
				unspent, baseCoins = append(unspent, c), append(baseCoins, c)
			}
		}
		spend := func(t *rapid.T, c coin, ttl *uint64, label string) (*ledger.Tx, []coin) {
			to := rapid.IntRange(0, len(keys)-1).Draw(t, label+" payee")
			outs := []ledger.TxOut{{Address: addr(to), Coin: c.value}}
			body := ledger.TxBody{Inputs: []ledger.TxIn{c.in}, Outputs: outs, TTL: ttl}
			fee, err := body.MinFee(p, 1)
			if err != nil {
				t.Fatal(err)
			}
			body.Fee, body.Outputs[0].Coin = fee, c.value-fee
			tx, err := body.Build([]ed25519.PrivateKey{keys[c.owner]})
			if err != nil {
				t.Fatal(err)
			}
			return tx, []coin{{ledger.TxIn{TxID: tx.ID()}, c.value - fee, to}}
		}
		// The snapshot: txs valid in order on base at slot 1, each spending
		// a coin of base or of a tx before it.
		var snapshot []*ledger.Tx
		for range rapid.IntRange(0, 30).Draw(t, "txs") {
			if len(unspent) == 0 {
				break
			}
			i := rapid.IntRange(0, len(unspent)-1).Draw(t, "coin")
			c := unspent[i]
			unspent = slices.Delete(unspent, i, i+1)
			var ttl *uint64
			if rapid.Bool().Draw(t, "ttl?") {
				v := rapid.Uint64Range(2, 12).Draw(t, "ttl")
				ttl = &v
			}
			tx, outs := spend(t, c, ttl, "tx")
			snapshot = append(snapshot, tx)
			unspent = append(unspent, outs...)
		}
		// A certified closure on base: some of the snapshot's txs that
		// spend base coins (included), or others spending base coins
		// (conflicting).
		closure := ledger.NewDiff()
		for _, c := range baseCoins {
			switch rapid.IntRange(0, 3).Draw(t, "closure takes") {
			case 0: // a conflicting tx
				tx, _ := spend(t, c, nil, "conflict")
				d, err := ledger.Reapply(p, ledger.Overlay{Base: base, Diffs: []*ledger.Diff{closure}}, 1, tx)
				if err != nil {
					t.Fatal(err)
				}
				closure.Append(d)
			case 1: // the snapshot's own tx spending it, if any
				for _, tx := range snapshot {
					if tx.Inputs[0] == c.in {
						d, err := ledger.Reapply(p, ledger.Overlay{Base: base, Diffs: []*ledger.Diff{closure}}, 1, tx)
						if err != nil {
							t.Fatal(err)
						}
						closure.Append(d)
					}
				}
			}
		}
		slot := rapid.Uint64Range(1, 14).Draw(t, "slot")
		rbBody := rapid.SampledFrom([]int{0, 300, 2000}).Draw(t, "rb body")
		limits := block.EBLimits{
			MaxTxs:          rapid.IntRange(0, 20).Draw(t, "eb txs"),
			MaxClosureBytes: rapid.IntRange(0, 5000).Draw(t, "eb closure"),
			MaxBodyBytes:    rapid.IntRange(5, 600).Draw(t, "eb body"),
		}
		view := ledger.Overlay{Base: base, Diffs: []*ledger.Diff{closure}}
		wantRB, wantEB := SelectTxs(p, view, slot, slices.Values(snapshot), rbBody, limits)
		gotRB, gotEB := SelectValidTxs(slot, slices.Values(snapshot), closure, rbBody, limits)
		if !slices.Equal(gotRB, wantRB) || !slices.Equal(gotEB, wantEB) {
			t.Fatalf("without reading the ledger: RB %d EB %d txs; reapplying: RB %d EB %d", len(gotRB), len(gotEB), len(wantRB), len(wantEB))
		}
	})
}
