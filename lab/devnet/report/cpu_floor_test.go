package report

import (
	"crypto/ed25519"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
)

// payments are chains of count txs from each of three funded addresses,
// each tx spending the output of the one before, the first the genesis
// funds: txs in an order in which they apply from genesis, returned with
// the genesis UTxO.
func payments(t *testing.T, params ledger.Params, count int) (ledger.MapUTxO, [][]byte) {
	genesis := ledger.MapUTxO{}
	var txs [][]byte
	for range 3 {
		key, err := keys.GenerateSigningKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		address := ledger.EnterpriseAddress(params.NetworkID, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
		head, coin := ledger.GenesisTxIn(address), uint64(1_000_000_000)
		genesis[head] = ledger.TxOut{Address: address, Coin: coin}
		for range count {
			tx, err := ledger.BuildPayment(params, []ledger.TxIn{head}, coin, nil, address, nil, []ed25519.PrivateKey{key})
			if err != nil {
				t.Fatal(err)
			}
			txs = append(txs, tx.Bytes())
			head, coin = ledger.TxIn{TxID: tx.ID(), Index: 0}, tx.Outputs[0].Coin
		}
	}
	return genesis, txs
}

// TestCPUFloor measures the floor on a few txs: every figure positive, the
// full apply (with its witness check) at least the reapply, the floor the
// sum of its parts; txs out of order fail the apply.
func TestCPUFloor(t *testing.T) {
	params := ledger.DefaultParams()
	genesis, sample := payments(t, params, 4)
	f, err := measureCPUFloor(params, genesis, sample)
	if err != nil {
		t.Fatal(err)
	}
	if f.Txs != 12 || f.DecodeSecondsPerKTx <= 0 || f.WitnessSecondsPerKTx <= 0 || f.ApplySecondsPerKTx <= 0 || f.ReapplySecondsPerKTx <= 0 {
		t.Errorf("floor %+v: every figure should be positive", f)
	}
	if f.ApplySecondsPerKTx < f.ReapplySecondsPerKTx {
		t.Errorf("apply %v s per 1,000 txs below reapply %v", f.ApplySecondsPerKTx, f.ReapplySecondsPerKTx)
	}
	if sum := f.DecodeSecondsPerKTx + f.ApplySecondsPerKTx + f.ReapplySecondsPerKTx; math.Abs(f.FloorSecondsPerKTx-sum) > 1e-12 {
		t.Errorf("floor %v, want decode + apply + reapply = %v", f.FloorSecondsPerKTx, sum)
	}
	if !strings.Contains(f.Measured, FloorDefinition) {
		t.Errorf("measured %q does not define the floor", f.Measured)
	}
	checkFormatted(t, f, "")

	slices.Reverse(sample)
	if _, err := measureCPUFloor(params, genesis, sample); err == nil || !strings.Contains(err.Error(), "apply") {
		t.Errorf("txs out of order: %v, want the apply's error", err)
	}
	if _, err := measureCPUFloor(params, genesis, nil); err == nil {
		t.Error("a floor without txs")
	}
}
