package devnet

import (
	"errors"
	"github.com/leiosnode/leiosnode/internal/devnet/layout"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestTxChainValid: every tx a chain builds is valid against the ledger
// (signatures included) on the UTxO its predecessors left, spends exactly
// the previous output and pays it back, less a fee close to the minimum,
// to its own address; once the funds cannot pay for another, the chain
// says so instead of building an invalid tx.
func TestTxChainValid(t *testing.T) {
	params := ledger.DefaultParams()
	funds := newTestFunds(t, 1, 0) // the coin is drawn below
	key, address := funds.keys[0], funds.addresses[0]
	minOutput := ledger.MinOutputCoin(params, address)
	rapid.Check(t, func(t *rapid.T) {
		// Plenty of funds for the steps, or enough for a dozen txs at most
		// (a fee is about 170,000 lovelace): a poor chain runs until its
		// funds are exhausted.
		poor := rapid.Bool().Draw(t, "poor")
		coin := rapid.Uint64Range(minOutput+1_000_000_000, 1<<40).Draw(t, "coin")
		steps := rapid.IntRange(10, 40).Draw(t, "steps")
		if poor {
			coin = minOutput + rapid.Uint64Range(0, 2_000_000).Draw(t, "spare")
			steps = 20
		}
		utxo := ledger.MapUTxO{ledger.GenesisTxIn(address): {Address: address, Coin: coin}}
		c := newTxChain("payment-0", 0, key, address, coin)
		for step := range steps {
			head, before := c.head, c.coin
			tx, err := c.next(params)
			if errors.Is(err, errFundsExhausted) {
				if fee, _ := (ledger.TxBody{Inputs: []ledger.TxIn{head}, Outputs: []ledger.TxOut{{Address: address, Coin: before}}}).MinFee(params, 1); before >= fee+minOutput {
					t.Fatalf("step %d: funds exhausted with %d left, enough for a fee of %d and an output of %d", step, before, fee, minOutput)
				}
				if !poor {
					t.Fatalf("step %d: a rich chain exhausted its funds", step)
				}
				return
			}
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if again, _ := c.next(params); again != tx {
				t.Fatalf("step %d: next built a second tx before the first was admitted", step)
			}
			diff, err := ledger.Apply(params, utxo, 0, tx)
			if err != nil {
				t.Fatalf("step %d: the ledger rejects the chain's tx: %v", step, err)
			}
			applyDiff(utxo, diff)
			if len(tx.Inputs) != 1 || tx.Inputs[0] != head {
				t.Fatalf("step %d: inputs %v, want [%v]", step, tx.Inputs, head)
			}
			if len(tx.Outputs) != 1 || string(tx.Outputs[0].Address) != string(address) {
				t.Fatalf("step %d: outputs %v, want one to the chain's address", step, tx.Outputs)
			}
			// The fee is the minimum, or a few bytes' worth above it when a
			// smaller change shortened the tx.
			if least := params.MinFee(tx.Size()); tx.Fee < least || tx.Fee > least+9*params.MinFeeA {
				t.Fatalf("step %d: fee %d, minimum %d", step, tx.Fee, least)
			}
			c.admit()
			if c.head != (ledger.TxIn{TxID: tx.ID(), Index: 0}) || c.coin != before-tx.Fee || c.pending != nil {
				t.Fatalf("step %d: after admission head %v coin %d, want %s#0 and %d", step, c.head, c.coin, tx.ID(), before-tx.Fee)
			}
		}
		if poor {
			t.Fatalf("a poor chain still had %d lovelace after %d txs", c.coin, steps)
		}
		// What is left is exactly the chain's one output.
		if len(utxo) != 1 || utxo[c.head].Coin != c.coin {
			t.Fatalf("UTxO %v, want only %v worth %d", utxo, c.head, c.coin)
		}
	})
}

// TestLoadTxChains: the firehose finds one chain per funded address of a
// generated devnet, in the order of the key files, spread over the nodes.
func TestLoadTxChains(t *testing.T) {
	tmpl, err := layout.LoadTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	d, err := layout.Write(layout.Spec{Dir: t.TempDir(), Nodes: 3, Funded: 11, Template: tmpl, SystemStart: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	chains, err := loadTxChains(filepath.Join(d.Dir, layout.FundsDirName), d.Genesis, len(d.Nodes))
	if err != nil {
		t.Fatal(err)
	}
	if len(chains) != 11 {
		t.Fatalf("%d chains, want 11", len(chains))
	}
	genesis, err := ledger.GenesisUTxO(d.Genesis.InitialFunds)
	if err != nil {
		t.Fatal(err)
	}
	for j, c := range chains {
		if want := "payment-" + strconv.Itoa(j); c.name != want {
			t.Errorf("chain %d is %s, want %s", j, c.name, want)
		}
		if c.node != j%3 {
			t.Errorf("%s goes to node %d, want %d", c.name, c.node, j%3)
		}
		out, ok := genesis[c.head]
		if !ok || string(out.Address) != string(c.address) || c.coin != out.Coin || c.coin != tmpl.FundsPerAddress {
			t.Errorf("%s: head %v, coin %d; genesis has %v, %v", c.name, c.head, c.coin, out, ok)
		}
	}

	// A key genesis does not fund is refused.
	if _, err := keys.GeneratePaymentKeyFiles(filepath.Join(d.Dir, layout.FundsDirName, "payment-99"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := loadTxChains(filepath.Join(d.Dir, layout.FundsDirName), d.Genesis, len(d.Nodes)); err == nil {
		t.Error("an unfunded key was taken")
	}
}
