package ledger

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A batch of txs, some broken at random positions (a bad signature, a
// stranger's witness, both, undecodable bytes, a spent input), some vouched
// for by the verified predicate: applying it with the signatures verified
// ahead on several goroutines gives what the plain loop gives, the same
// diff or the same error, and that error is the one of the first broken tx
// the predicate does not excuse.
func TestPropertyVerifyAheadAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := DefaultParams()
		keys := []ed25519.PrivateKey{testKey(1), testKey(2), testKey(3)}
		stranger := testKey(0xaa)
		utxo := MapUTxO{}
		type coin struct {
			in    TxIn
			value uint64
			owner int
		}
		// One unspent output per key at first; each tx spends one and pays
		// it all, less the fee, to a key drawn, in its place.
		coins := make([]coin, len(keys))
		for k, key := range keys {
			coins[k] = coin{TxIn{TxID: [32]byte{0xee, byte(k)}}, 1_000_000_000, k}
			utxo[coins[k].in] = TxOut{Address: addrOf(key), Coin: coins[k].value}
		}
		const (
			intact = iota
			badSignature
			strangerWitness
			strangerBadSignature // missing witness and bad signature: missing wins
			extraBadWitness      // the owner's witness, then a stranger's with a bad signature
			undecodable
			spentInput
		)
		var spent []TxIn
		held := map[[32]byte]bool{}
		var raws [][]byte
		want := "" // the first error the batch must stop at
		for i := range rapid.IntRange(1, 2*aheadChunk+10).Draw(t, "txs") {
			c := rapid.IntRange(0, len(coins)-1).Draw(t, "coin")
			to := rapid.IntRange(0, len(keys)-1).Draw(t, "payee")
			mutation := intact
			if rapid.IntRange(0, 9).Draw(t, "broken?") == 0 {
				mutation = rapid.IntRange(badSignature, spentInput).Draw(t, "mutation")
			}
			if mutation == spentInput && len(spent) == 0 {
				mutation = intact
			}
			in, total := coins[c].in, coins[c].value
			signers := []ed25519.PrivateKey{keys[coins[c].owner]}
			switch mutation {
			case strangerWitness, strangerBadSignature:
				signers = []ed25519.PrivateKey{stranger}
			case extraBadWitness:
				signers = append(signers, stranger)
			case spentInput:
				in = rapid.SampledFrom(spent).Draw(t, "spent input")
			}
			tx, err := BuildPayment(p, []TxIn{in}, total, nil, addrOf(keys[to]), nil, signers)
			if err != nil {
				t.Fatalf("building tx %d: %v", i, err)
			}
			raw := bytes.Clone(tx.Bytes())
			switch mutation {
			case badSignature, strangerBadSignature, extraBadWitness:
				sig := tx.Witnesses[len(tx.Witnesses)-1].Signature
				raw[bytes.Index(raw, sig[:])+len(sig)-1] ^= 1
			case undecodable:
				raw = raw[:len(raw)-1]
			}
			vouched := rapid.Bool().Draw(t, "held by the mempool")
			if vouched {
				held[tx.Hash()] = true // the hash of the intact bytes: a mangled tx is never vouched for
			}
			if want == "" {
				switch {
				case mutation == undecodable:
					want = fmt.Sprintf("tx %d: ", i)
				case mutation == spentInput:
					want = fmt.Sprintf("tx %d (%x): %s", i, tx.ID(), ErrInputNotInUTxO)
				case vouched && mutation != badSignature && mutation != strangerBadSignature && mutation != extraBadWitness:
				case mutation == badSignature, mutation == extraBadWitness:
					want = fmt.Sprintf("tx %d (%x): %s", i, tx.ID(), ErrBadWitness)
				case mutation == strangerWitness, mutation == strangerBadSignature:
					want = fmt.Sprintf("tx %d (%x): %s", i, tx.ID(), ErrMissingWitness)
				}
			}
			raws = append(raws, raw)
			spent = append(spent, coins[c].in)
			coins[c] = coin{TxIn{TxID: tx.ID()}, total - tx.Fee, to}
		}
		verified := func(tx *Tx) bool { return held[tx.Hash()] }
		seq, seqErr := applyTxs(p, utxo, 1000, raws, verified, 1)
		workers := rapid.IntRange(2, 4).Draw(t, "workers")
		par, parErr := applyTxs(p, utxo, 1000, raws, verified, workers)
		switch {
		case (seqErr == nil) != (parErr == nil):
			t.Fatalf("plain loop: %v; ahead on %d: %v", seqErr, workers, parErr)
		case seqErr != nil && seqErr.Error() != parErr.Error():
			t.Fatalf("different errors:\n plain loop: %v\n ahead:      %v", seqErr, parErr)
		case seqErr == nil && (!equalDiffs(seq, par) || seq.Txs != par.Txs):
			t.Fatal("the diffs differ")
		case want == "" && seqErr != nil:
			t.Fatalf("refused an acceptable batch: %v", seqErr)
		case want != "" && (seqErr == nil || !strings.HasPrefix(seqErr.Error(), want)):
			t.Fatalf("got %v, want %q…", seqErr, want)
		}
	})
}
