package load

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
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
		c := newTxChain("payment-0", 0, key, address, ledger.GenesisTxIn(address), coin)
		for step := range steps {
			head, before := c.head, c.coin
			built, err := c.next(params)
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
			if again, _ := c.next(params); again != built {
				t.Fatalf("step %d: next built a second tx before the first was admitted", step)
			}
			tx := decoded(t, built)
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
			if c.head != (ledger.TxIn{TxID: tx.ID(), Index: 0}) || c.coin != before-tx.Fee || len(c.pending) != 0 {
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

// decoded is a chain's tx as the ledger decodes it; the test fails if it
// does not, or if its hashes are not the chain's.
func decoded(t interface {
	Helper()
	Fatalf(string, ...any)
}, built *chainTx) *ledger.Tx {
	t.Helper()
	tx, err := ledger.DecodeTx(built.Bytes())
	if err != nil {
		t.Fatalf("the chain's tx does not decode: %v", err)
	}
	if tx.ID() != built.ID() || tx.Hash() != built.Hash() || tx.Outputs[0].Coin != built.coin {
		t.Fatalf("the chain's tx: id %x, hash %x, coin %d; decoded %x, %x, %d", built.ID(), built.Hash(), built.coin, tx.ID(), tx.Hash(), tx.Outputs[0].Coin)
	}
	return tx
}

// TestFundedKeys: a generated devnet's funds are read one key per funded
// address, in the order of the key files, each with its genesis coin; a
// key genesis does not fund is refused.
func TestFundedKeys(t *testing.T) {
	tmpl, err := layout.LoadTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	d, err := layout.Write(layout.Spec{Dir: t.TempDir(), Nodes: 3, Funded: 11, Template: tmpl, SystemStart: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	fundsDir := filepath.Join(d.Dir, layout.FundsDirName)
	funded, err := FundedKeys(fundsDir, d.Genesis)
	if err != nil {
		t.Fatal(err)
	}
	if len(funded) != 11 {
		t.Fatalf("%d keys, want 11", len(funded))
	}
	genesis, err := ledger.GenesisUTxO(d.Genesis.InitialFunds)
	if err != nil {
		t.Fatal(err)
	}
	for j, k := range funded {
		if want := "payment-" + strconv.Itoa(j); k.Name != want {
			t.Errorf("key %d is %s, want %s", j, k.Name, want)
		}
		out, ok := genesis[ledger.GenesisTxIn(k.Address)]
		if !ok || k.Coin != out.Coin || k.Coin != tmpl.FundsPerAddress {
			t.Errorf("%s: coin %d; genesis has %v, %v", k.Name, k.Coin, out, ok)
		}
	}

	if _, err := keys.GeneratePaymentKeyFiles(filepath.Join(fundsDir, "payment-99"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := FundedKeys(fundsDir, d.Genesis); err == nil || !strings.Contains(err.Error(), "payment-99") {
		t.Errorf("an unfunded key: %v, want an error naming it", err)
	}
}

// TestNew: the firehose reads the parameters and each key's largest
// output from the nodes, chain j pinned to node j mod N; a key holding
// nothing, a node that does not answer and a file that is not a payment
// signing key are errors naming them.
func TestNew(t *testing.T) {
	params := ledger.DefaultParams()
	funds := newTestFunds(t, 3, 1_000_000_000)
	small := ledger.TxIn{TxID: [32]byte{7}, Index: 1} // a second, smaller output of key 0
	funds.genesis[small] = ledger.TxOut{Address: funds.addresses[0], Coin: 5_000_000}
	var nodes []Node
	for i := range 2 {
		nodes = append(nodes, newFakeAPINode(t, params, funds.genesis).node(fmt.Sprintf("node-%d", i)))
	}
	var keyFiles []string
	for j, key := range funds.keys {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("payment-%d.skey", j))
		if err := keys.WriteSigningKey(path, keys.Payment, key); err != nil {
			t.Fatal(err)
		}
		keyFiles = append(keyFiles, path)
	}
	read, err := ReadKeys(keyFiles)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(t.Context(), nodes, read, &http.Client{}, Options{Rate: 10})
	if err != nil {
		t.Fatal(err)
	}
	if f.params != params || len(f.chains) != 3 {
		t.Fatalf("params %+v, %d chains", f.params, len(f.chains))
	}
	for j, c := range f.chains {
		if c.name != fmt.Sprintf("payment-%d", j) || c.node != j%2 || c.head != ledger.GenesisTxIn(funds.addresses[j]) || c.coin != funds.coin {
			t.Errorf("chain %d: %s to node %d from %v worth %d", j, c.name, c.node, c.head, c.coin)
		}
	}

	poor := newTestFunds(t, 1, 0)
	if _, err := New(t.Context(), nodes, []Key{{Name: "poor", Key: poor.keys[0]}}, &http.Client{}, Options{Rate: 10}); err == nil || !strings.Contains(err.Error(), "poor: its address") {
		t.Errorf("a key holding nothing: %v", err)
	}
	down := Node{Name: "node-9", URL: "http://127.0.0.1:1"}
	if _, err := New(t.Context(), append(nodes, down), read, &http.Client{}, Options{Rate: 10}); err == nil || !strings.Contains(err.Error(), "node-9 (http://127.0.0.1:1) does not answer") {
		t.Errorf("a node that does not answer: %v", err)
	}
	vkey := filepath.Join(t.TempDir(), "payment.vkey")
	if err := keys.WriteVerificationKey(vkey, keys.Payment, funds.keys[0].Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeys([]string{vkey}); err == nil || !strings.Contains(err.Error(), vkey) {
		t.Errorf("a verification key read as a signing key: %v", err)
	}
}
