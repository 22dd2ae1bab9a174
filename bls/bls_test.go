package bls

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	blst "github.com/supranational/blst/bindings/go"
)

// testKey is the deterministic key of seed byte i.
func testKey(t testing.TB, i byte) *SecretKey {
	t.Helper()
	sk, err := KeyFromSeed(bytes.Repeat([]byte{i}, SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	return sk
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignVerify(t *testing.T) {
	sk, other := testKey(t, 1), testKey(t, 2)
	msg := []byte("vote")
	sig := sk.Sign(msg)
	if !sk.PublicKey().Verify(msg, sig) {
		t.Fatal("a signature does not verify")
	}
	if sk.PublicKey().Verify([]byte("votf"), sig) {
		t.Error("verifies on another message")
	}
	if other.PublicKey().Verify(msg, sig) {
		t.Error("verifies under another key")
	}
	if sk.PublicKey().Verify(msg, other.Sign(msg)) {
		t.Error("another key's signature verifies")
	}
	if sk.PublicKey().Verify(msg, new(Signature)) {
		t.Error("the zero Signature verifies")
	}
	// Signing is deterministic.
	if sk.Sign(msg).Bytes() != sig.Bytes() {
		t.Error("two signatures of one message differ")
	}
}

func TestRoundTrips(t *testing.T) {
	for i := range byte(20) {
		sk := testKey(t, i)
		b := sk.Bytes()
		back, err := SecretKeyFromBytes(b[:])
		if err != nil || back.Bytes() != b {
			t.Fatalf("secret key %d: %v", i, err)
		}
		pk := sk.PublicKey()
		pkb := pk.Bytes()
		pkBack, err := PublicKeyFromBytes(pkb[:])
		if err != nil || !pkBack.Equal(pk) || pkBack.Bytes() != pkb {
			t.Fatalf("public key %d: %v", i, err)
		}
		sig := sk.Sign([]byte{i})
		sigb := sig.Bytes()
		sigBack, err := SignatureFromBytes(sigb[:])
		if err != nil || sigBack.Bytes() != sigb || !pkBack.Verify([]byte{i}, sigBack) {
			t.Fatalf("signature %d: %v", i, err)
		}
		proof := sk.ProvePossession()
		pb := proof.Bytes()
		proofBack, err := PossessionProofFromBytes(pb[:])
		if err != nil || proofBack.Bytes() != pb || !pkBack.VerifyPossession(proofBack) {
			t.Fatalf("proof of possession %d: %v", i, err)
		}
	}
	a, _ := KeyFromSeed(bytes.Repeat([]byte{7}, 40))
	b, _ := KeyFromSeed(bytes.Repeat([]byte{7}, 40))
	if a.Bytes() != b.Bytes() {
		t.Error("KeyFromSeed is not deterministic")
	}
	if _, err := KeyFromSeed(make([]byte, SeedSize-1)); !errors.Is(err, ErrInvalidSecretKey) {
		t.Errorf("short seed: %v", err)
	}
	g1, err := GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := GenerateKey(nil)
	if g1.Bytes() == g2.Bytes() {
		t.Error("GenerateKey drew the same key twice")
	}
	seeded, _ := GenerateKey(bytes.NewReader(bytes.Repeat([]byte{3}, SeedSize)))
	if seeded.Bytes() != testKey(t, 3).Bytes() {
		t.Error("GenerateKey does not derive from the reader's bytes")
	}
	if _, err := GenerateKey(bytes.NewReader(nil)); err == nil {
		t.Error("GenerateKey with an empty reader succeeded")
	}
}

func TestPossession(t *testing.T) {
	sk, other := testKey(t, 1), testKey(t, 2)
	pk := sk.PublicKey()
	if !pk.VerifyPossession(sk.ProvePossession()) {
		t.Fatal("a proof of possession does not verify")
	}
	if pk.VerifyPossession(other.ProvePossession()) {
		t.Error("another key's proof verifies")
	}
	// Domain separation: a signature on the key's bytes is no proof, and a
	// proof is no signature on them.
	pkb := pk.Bytes()
	if pk.VerifyPossession(&PossessionProof{sig: *sk.Sign(pkb[:])}) {
		t.Error("a signature over the public key passes as a proof of possession")
	}
	if pk.Verify(pkb[:], &sk.ProvePossession().sig) {
		t.Error("a proof of possession passes as a signature over the public key")
	}
}

// TestRogueKey: an attacker who knows x publishes pk_r = x·g2 − pk_h for an
// honest key pk_h. The aggregate of the two is x·g2, so a signature made
// with x alone verifies as signed by both — which is why a key is admitted
// only with a proof of possession, and the rogue key has none.
func TestRogueKey(t *testing.T) {
	honest, attacker := testKey(t, 1), testKey(t, 66)
	rogueP := blst.P2Generator().Mult(attacker.s).Sub(&honest.PublicKey().p).ToAffine()
	rogue, err := PublicKeyFromBytes(rogueP.Compress())
	if err != nil {
		t.Fatal(err) // a valid point: only the proof of possession tells it
	}
	msg := []byte("certify")
	forged := attacker.Sign(msg)
	if !VerifyAggregate([]*PublicKey{honest.PublicKey(), rogue}, msg, forged) {
		t.Fatal("the rogue-key forgery should verify without proofs of possession")
	}
	if rogue.VerifyPossession(attacker.ProvePossession()) {
		t.Error("the attacker's own proof passes for the rogue key")
	}
	rb := rogue.Bytes()
	if rogue.VerifyPossession(&PossessionProof{sig: *attacker.Sign(rb[:])}) {
		t.Error("a proof made with x passes for the rogue key")
	}
}

func TestAggregate(t *testing.T) {
	const n = 12
	msg := []byte("rb hash")
	var sks []*SecretKey
	var pks []*PublicKey
	var sigs []*Signature
	for i := range byte(n) {
		sk := testKey(t, i+1)
		sks, pks, sigs = append(sks, sk), append(pks, sk.PublicKey()), append(sigs, sk.Sign(msg))
	}
	outsider := testKey(t, 99)
	for k := 1; k <= n; k++ {
		agg, err := AggregateSignatures(sigs[:k])
		if err != nil {
			t.Fatal(err)
		}
		if !VerifyAggregate(pks[:k], msg, agg) {
			t.Fatalf("aggregate of %d signers does not verify", k)
		}
		aggKey, err := AggregatePublicKeys(pks[:k])
		if err != nil || !aggKey.Verify(msg, agg) {
			t.Fatalf("aggregate of %d signers against the aggregate key: %v", k, err)
		}
		if VerifyAggregate(pks[:k], []byte("rb hasi"), agg) {
			t.Errorf("%d signers: verifies on another message", k)
		}
		// One signer swapped for a key that did not sign.
		swapped := append([]*PublicKey{}, pks[:k]...)
		swapped[k/2] = outsider.PublicKey()
		if VerifyAggregate(swapped, msg, agg) {
			t.Errorf("%d signers: verifies with one signer swapped", k)
		}
		// One signature on another message.
		wrong := append([]*Signature{}, sigs[:k]...)
		wrong[k-1] = sks[k-1].Sign([]byte("other"))
		if bad, _ := AggregateSignatures(wrong); VerifyAggregate(pks[:k], msg, bad) {
			t.Errorf("%d signers: verifies with one signature wrong", k)
		}
		// A signer missing from the keys, or a key too many.
		if k > 1 && VerifyAggregate(pks[:k-1], msg, agg) {
			t.Errorf("%d signers: verifies without one signer's key", k)
		}
		if k < n && VerifyAggregate(pks[:k+1], msg, agg) {
			t.Errorf("%d signers: verifies with a key too many", k)
		}
	}
	if _, err := AggregateSignatures(nil); !errors.Is(err, ErrEmptyAggregate) {
		t.Errorf("empty signature aggregate: %v", err)
	}
	if _, err := AggregatePublicKeys(nil); !errors.Is(err, ErrEmptyAggregate) {
		t.Errorf("empty key aggregate: %v", err)
	}
	if VerifyAggregate(nil, msg, sigs[0]) {
		t.Error("no keys verify")
	}
	// Keys that cancel out aggregate to the identity, which is refused.
	neg, _ := PublicKeyFromBytes(new(blst.P2).Sub(&pks[0].p).ToAffine().Compress())
	if _, err := AggregatePublicKeys([]*PublicKey{pks[0], neg}); !errors.Is(err, ErrInvalidPublicKey) {
		t.Errorf("keys summing to the identity: %v", err)
	}
	negSig := &Signature{p: *new(blst.P1).Sub(&sigs[0].p).ToAffine()}
	if _, err := AggregateSignatures([]*Signature{sigs[0], negSig}); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("signatures summing to the identity: %v", err)
	}
}

func TestVerifyBatch(t *testing.T) {
	var batch []SignedMessage
	for i := range byte(40) {
		sk := testKey(t, i+1)
		msg := []byte{i % 3} // a few messages, each signed by several keys
		batch = append(batch, SignedMessage{Key: sk.PublicKey(), Message: msg, Signature: sk.Sign(msg)})
	}
	if !VerifyBatch(batch) || !VerifyBatch(batch[:1]) || !VerifyBatch(nil) {
		t.Fatal("a valid batch does not verify")
	}
	for _, i := range []int{0, 17, 39} {
		bad := append([]SignedMessage{}, batch...)
		bad[i].Message = []byte("x")
		if VerifyBatch(bad) {
			t.Errorf("a batch with triple %d's message wrong verifies", i)
		}
		bad = append([]SignedMessage{}, batch...)
		bad[i].Signature = batch[(i+1)%len(batch)].Signature
		if VerifyBatch(bad) {
			t.Errorf("a batch with triple %d's signature wrong verifies", i)
		}
		if VerifyBatch(bad[i : i+1]) {
			t.Errorf("a batch of the one wrong triple %d verifies", i)
		}
	}
	// Two wrong signatures that cancel in a plain sum are caught by the
	// random multipliers.
	bad := append([]SignedMessage{}, batch...)
	delta := testKey(t, 200).Sign([]byte("delta"))
	plus, _ := AggregateSignatures([]*Signature{batch[0].Signature, delta})
	minus := &Signature{p: *new(blst.P1).Add(&batch[1].Signature.p).Sub(&delta.p).ToAffine()}
	bad[0].Signature, bad[1].Signature = plus, minus
	if VerifyBatch(bad) {
		t.Error("two wrong signatures whose errors cancel pass the batch")
	}
}

func TestDecodeRejects(t *testing.T) {
	sk := testKey(t, 1)
	pk, sig := sk.PublicKey().Bytes(), sk.Sign(nil).Bytes()
	offCurve := func(size int) []byte { // the first x whose compression does not decompress
		for x := byte(1); ; x++ {
			b := make([]byte, size)
			b[0], b[size-1] = 0x80, x
			var ok bool
			if size == SignatureSize {
				ok = new(blst.P1Affine).Uncompress(b) != nil
			} else {
				ok = new(blst.P2Affine).Uncompress(b) != nil
			}
			if !ok {
				return b
			}
		}
	}
	outsideSubgroup := func(size int) []byte { // on the curve, not in the subgroup
		for x := byte(1); ; x++ {
			b := make([]byte, size)
			b[0], b[size-1] = 0x80, x
			if size == SignatureSize {
				if p := new(blst.P1Affine).Uncompress(b); p != nil && !p.InG1() {
					return b
				}
			} else if p := new(blst.P2Affine).Uncompress(b); p != nil && !p.InG2() {
				return b
			}
		}
	}
	identity := func(size int) []byte {
		b := make([]byte, size)
		b[0] = 0xc0
		return b
	}
	notCanonical := func(size int) []byte { // x ≥ p
		b := bytes.Repeat([]byte{0xff}, size)
		b[0] = 0x9f
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short", pk[:95]},
		{"long", append(pk[:], 0)},
		{"uncompressed flag clear", append([]byte{pk[0] &^ 0x80}, pk[1:]...)},
		{"all zero", make([]byte, PublicKeySize)},
		{"identity", identity(PublicKeySize)},
		{"identity with bits set", append(identity(PublicKeySize)[:95], 1)},
		{"x not canonical", notCanonical(PublicKeySize)},
		{"off the curve", offCurve(PublicKeySize)},
		{"outside the subgroup", outsideSubgroup(PublicKeySize)},
	} {
		if _, err := PublicKeyFromBytes(tc.b); !errors.Is(err, ErrInvalidPublicKey) {
			t.Errorf("public key %s: %v", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short", sig[:47]},
		{"long", append(sig[:], 0)},
		{"uncompressed flag clear", append([]byte{sig[0] &^ 0x80}, sig[1:]...)},
		{"all zero", make([]byte, SignatureSize)},
		{"identity", identity(SignatureSize)},
		{"x not canonical", notCanonical(SignatureSize)},
		{"off the curve", offCurve(SignatureSize)},
		{"outside the subgroup", outsideSubgroup(SignatureSize)},
	} {
		if _, err := SignatureFromBytes(tc.b); !errors.Is(err, ErrInvalidSignature) {
			t.Errorf("signature %s: %v", tc.name, err)
		}
		if _, err := PossessionProofFromBytes(tc.b); !errors.Is(err, ErrInvalidSignature) {
			t.Errorf("proof of possession %s: %v", tc.name, err)
		}
	}
	// The group order r, and r+1 … all 0xff: not below r.
	order := unhex(t, "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001")
	for name, b := range map[string][]byte{
		"zero": make([]byte, SecretKeySize), "the group order": order,
		"all 0xff": bytes.Repeat([]byte{0xff}, SecretKeySize), "short": make([]byte, 31),
	} {
		if _, err := SecretKeyFromBytes(b); !errors.Is(err, ErrInvalidSecretKey) {
			t.Errorf("secret key %s: %v", name, err)
		}
	}
	below := bytes.Clone(order)
	below[31]--
	if _, err := SecretKeyFromBytes(below); err != nil {
		t.Errorf("secret key r-1: %v", err)
	}
}

func ExampleVerifyAggregate() {
	msg := []byte("one message, many signers")
	var pks []*PublicKey
	var sigs []*Signature
	for i := range byte(3) {
		sk, _ := KeyFromSeed(bytes.Repeat([]byte{i + 1}, SeedSize))
		pks, sigs = append(pks, sk.PublicKey()), append(sigs, sk.Sign(msg))
	}
	agg, _ := AggregateSignatures(sigs)
	fmt.Println(VerifyAggregate(pks, msg, agg))
	// Output: true
}
