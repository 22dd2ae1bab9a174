package ledger

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
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

// cardanoMainnetMetadataTx is a Cardano mainnet tx carrying a CIP-20
// message (`{674: {"msg": "Tokeo"}}`, the Shelley form), built and signed
// by a wallet, as published in the charms project's tests
// (SAMPLE_CARDANO_TX_HEX): tag-258 inputs, two base-address outputs on
// network 1, body key 7, one vkey witness in an untagged array.
const cardanoMainnetMetadataTx = "84a400d901028182582011a2338987035057f6c36286cf5aadc02573059b2cde9790017eb4e148f0c67a00" +
	"01828258390174f84e13070bb755eaa01cb717da8c7450daf379948e979f6de99d26ba89ff199fde572546b9a044eb129ad2edb184bd79cde6" +
	"3ab4b47aec1a01312d008258390184f1c3b1fff5241088acc4ce0aec81f45a71a70e35c94e30a70b7cdfeb0785cdec744029db6b4f344b1123" +
	"497c9cabfeeb94af20fcfddfe01a33e578fd021a000299e90758201e8eb8575d879922d701c12daa7366cb71b6518a9500e083a966a8e66b56" +
	"ed23a10081825820ea444825bbd5cc97b6c795437849fe55694b52e2f51485ac76ca2d9f991e83305840d59db4fa0b4bb233504f5e6826261a" +
	"2e18b2e22cb3df4f631ab77d94d62e8df3200536271f3f3a625bc86919714972964f070f909f145b342f2889f58ccc210ff5a11902a2a1636d" +
	"736765546f6b656f"

// The mainnet tx's body key 7 is the hash this package computes over its
// auxiliary data's bytes, and its wallet's witness verifies over the tx id
// computed here: the conventions of Cardano's tooling, metadata included.
func TestCardanoMainnetMetadataTx(t *testing.T) {
	raw := unhex(t, cardanoMainnetMetadataTx)
	tx, err := DecodeTx(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(tx.AuxData()); got != "a11902a2a1636d736765546f6b656f" {
		t.Fatalf("AuxData = %s", got)
	}
	if h := AuxDataHash(tx.AuxData()); hex.EncodeToString(h[:]) != "1e8eb8575d879922d701c12daa7366cb71b6518a9500e083a966a8e66b56ed23" {
		t.Fatalf("auxiliary data hash = %x", h)
	}
	// Python hashlib.blake2b over the body bytes / the whole tx.
	if got := hex.EncodeToString(idOf(tx)); got != "974cd8137ec7bd73cebcd27d3c532db11b532a803731d236d36b75870130381e" {
		t.Fatalf("ID = %s", got)
	}
	if got := hex.EncodeToString(hashOf(tx)); got != "49ba564982fa2dc08fd9b18191e62d57d79cf14e5f6fa309037e154905173b3b" {
		t.Fatalf("Hash = %s", got)
	}
	if tx.Size() != 336 || tx.Fee != 170_473 || len(tx.Outputs) != 2 || tx.Outputs[0].Coin != 20_000_000 {
		t.Fatalf("decoded %+v, %d bytes", tx, tx.Size())
	}
	w := tx.Witnesses[0]
	id := tx.ID()
	if !ed25519.Verify(w.VKey[:], id[:], w.Signature[:]) {
		t.Fatal("the wallet's witness does not verify over our tx id")
	}

	// Spent from an output of the signing key on network 1, under the
	// mainnet fee parameters it paid (44·336 + 155,381 = 170,165 ≤ 170,473),
	// the tx passes every rule.
	p := DefaultParams()
	p.NetworkID = 1
	total := tx.Outputs[0].Coin + tx.Outputs[1].Coin + tx.Fee
	utxo := MapUTxO{tx.Inputs[0]: {Address: EnterpriseAddress(1, KeyHash(w.VKey[:])), Coin: total}}
	if _, err := Apply(p, utxo, 0, tx); err != nil {
		t.Fatal(err)
	}
	// A byte of the message changed: the hash no longer matches.
	raw[len(raw)-1] ^= 1
	if _, err := DecodeTx(raw); !errors.Is(err, ErrAuxDataHashMismatch) {
		t.Fatalf("message changed: err = %v", err)
	}
}
