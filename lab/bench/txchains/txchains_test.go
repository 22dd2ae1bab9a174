package txchains

import (
	"context"
	"testing"

	"github.com/leiosnode/leiosnode/ledger"
)

// The simulated ledger: a block must extend each chain from its next
// unapplied tx, and views read the state of their tip.
func TestLedger(t *testing.T) {
	chains, err := Build(context.Background(), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	led := NewLedger(chains, &Costs{})
	before, _, _, _ := led.TipLedger()
	a := chains.Txs[0]
	if err := led.Adopt([]*ledger.Tx{a[1]}); err == nil {
		t.Fatal("a block skipping a chain's first tx was adopted")
	}
	if err := led.Adopt(a[:2]); err != nil {
		t.Fatal(err)
	}
	after, tip, _, _ := led.TipLedger()
	if tip.BlockNumber != 2 {
		t.Fatalf("tip %+v after one block", tip)
	}
	spent, change := a[0].Inputs[0], ledger.TxIn{TxID: a[1].ID()}
	for _, tc := range []struct {
		view ledger.UTxO
		in   ledger.TxIn
		want bool
	}{
		{before, spent, true}, {before, change, false}, {after, spent, false}, {after, change, true},
		{after, ledger.TxIn{TxID: a[0].ID()}, false}, {after, chains.Txs[1][0].Inputs[0], true},
	} {
		if _, ok, err := tc.view.Lookup(tc.in); err != nil || ok != tc.want {
			t.Errorf("Lookup(%x…) = %v, %v; want %v", tc.in.TxID[:4], ok, err, tc.want)
		}
	}
}
