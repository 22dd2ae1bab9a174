package ledger

import (
	"crypto/ed25519"
	"encoding/hex"
	"testing"
)

// cardanoCLITx is a Conway payment tx built and signed by cardano-cli
// (`transaction build-raw` with fee 0, then `transaction sign`), as published
// in the cardano-scaling/hydra documentation (snapshot side-loading how-to).
// Its inputs and witnesses are tag-258 sets.
const cardanoCLITx = "84a300d9010281825820c9a5fb7ca6f55f07facefccb7c5d824eed00ce18719d28ec4c4a2e4041e85d97" +
	"00018182581d6069830961c6af9095b0f2648dff31fa9545d8f0b6623db865eb78fde81a05f5e1000200a100d90102" +
	"81825820eb94e8236e2099357fa499bfbc415968691573f25ec77435b7949f5fdfaa5da058400809e9809a08f5412c" +
	"326cc5f5aba259e633b458fde47fa52be61975b64af55bfa6c303522d9d784a136abd05aadcadbb52b8abad954cc61" +
	"605341125a75b009f5f6"

// The tx id this package computes is the one cardano-cli signed: the
// witness made by Cardano's own tooling verifies over it.
func TestCardanoCLITx(t *testing.T) {
	tx, err := DecodeTx(unhex(t, cardanoCLITx))
	if err != nil {
		t.Fatal(err)
	}
	// Python hashlib.blake2b over the body bytes / the whole tx.
	if got := hex.EncodeToString(idOf(tx)); got != "93d8bb448a4dcd80da5199919a354ba76675139d71dc7e7845acc4d4e3717f64" {
		t.Fatalf("ID = %s", got)
	}
	if got := hex.EncodeToString(hashOf(tx)); got != "911f2eb6eafb0f85e7a2212db04c2baa50333a579d496bbb03f9a44ef67fcefb" {
		t.Fatalf("Hash = %s", got)
	}
	if len(tx.Witnesses) != 1 || tx.Fee != 0 || len(tx.Outputs) != 1 || tx.Outputs[0].Coin != 100_000_000 {
		t.Fatalf("decoded %+v", tx)
	}
	w := tx.Witnesses[0]
	id := tx.ID()
	if !ed25519.Verify(w.VKey[:], id[:], w.Signature[:]) {
		t.Fatal("cardano-cli's witness does not verify over our tx id")
	}

	// Spent from an output of the signing key, under fee-free parameters,
	// the tx passes every rule.
	p := DefaultParams()
	p.MinFeeA, p.MinFeeB = 0, 0
	utxo := MapUTxO{tx.Inputs[0]: {Address: EnterpriseAddress(0, KeyHash(w.VKey[:])), Coin: 100_000_000}}
	if _, err := Apply(p, utxo, 0, tx); err != nil {
		t.Fatal(err)
	}
}
