package vrf

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"filippo.io/edwards25519"
	"pgregory.net/rapid"
)

// groupOrder is q = 2^252 + 27742317777372353535851937790883648493,
// little-endian.
var groupOrder = [32]byte{
	0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
}

// addLE returns a + b as 32 little-endian bytes (the caller keeps it below 2^256).
func addLE(a, b []byte) []byte {
	out := make([]byte, 32)
	carry := 0
	for i := range out {
		sum := int(a[i]) + int(b[i]) + carry
		out[i], carry = byte(sum), sum>>8
	}
	return out
}

// nonCanonical returns the encoding y + p of a point whose y is below 19 and
// whose order is large, so it decodes (leniently) to a valid, non-small-order
// point.
func nonCanonical(t *testing.T) (lenient [32]byte) {
	t.Helper()
	for y := byte(0); y < 19; y++ {
		var enc [32]byte
		enc[0] = y
		p, err := new(edwards25519.Point).SetBytes(enc[:])
		if err != nil || new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
			continue
		}
		lenient = enc
		lenient[0] += 0xed // + p = 2^255 - 19: low byte 0xed, then 0xff…, top 0x7f
		for i := 1; i < 31; i++ {
			lenient[i] = 0xff
		}
		lenient[31] = 0x7f
		if q, err := new(edwards25519.Point).SetBytes(lenient[:]); err != nil || q.Equal(p) != 1 {
			t.Fatalf("y+p encoding of y=%d does not decode to the same point", y)
		}
		return lenient
	}
	t.Fatal("no large-order point with y < 19")
	return
}

// smallOrderEncodings are the canonical encodings of the eight points of
// order dividing 8.
var smallOrderEncodings = []string{
	"0100000000000000000000000000000000000000000000000000000000000000", // identity
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
	"0000000000000000000000000000000000000000000000000000000000000000", // order 4
	"0000000000000000000000000000000000000000000000000000000000000080", // order 4
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
}

func TestVerifyRejects(t *testing.T) {
	tv := rfc9381Vectors[1]
	sk, err := NewKeyFromSeed(unhex(t, tv.sk))
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewKeyFromSeed(unhex(t, rfc9381Vectors[2].sk))
	if err != nil {
		t.Fatal(err)
	}
	alpha := unhex(t, tv.alpha)
	proof, _ := Prove(sk, alpha)
	lenientGamma := nonCanonical(t)

	with := func(edit func(p *[ProofSize]byte)) [ProofSize]byte {
		p := proof
		edit(&p)
		return p
	}
	type refusal struct {
		name   string
		pk     PublicKey
		alpha  []byte
		proof  [ProofSize]byte
		reason string
	}
	cases := []refusal{
		{"wrong alpha", sk.Public(), []byte("another slot"), proof, "challenge"},
		{"empty alpha", sk.Public(), nil, proof, "challenge"},
		{"wrong key", other.Public(), alpha, proof, "challenge"},
		{"gamma bit flipped", sk.Public(), alpha, with(func(p *[ProofSize]byte) { p[3] ^= 0x10 }), ""},
		{"gamma sign flipped", sk.Public(), alpha, with(func(p *[ProofSize]byte) { p[31] ^= 0x80 }), "challenge"},
		{"c bit flipped", sk.Public(), alpha, with(func(p *[ProofSize]byte) { p[40] ^= 1 }), "challenge"},
		{"s bit flipped", sk.Public(), alpha, with(func(p *[ProofSize]byte) { p[50] ^= 1 }), "challenge"},
		// s + q would satisfy the group equations (q·B = identity): only the
		// s < q check of RFC 9381 §5.4.4 step 8 stops it.
		{"s plus q", sk.Public(), alpha, with(func(p *[ProofSize]byte) { copy(p[48:], addLE(p[48:], groupOrder[:])) }), "group order"},
		{"s all ones", sk.Public(), alpha, with(func(p *[ProofSize]byte) { copy(p[48:], bytes.Repeat([]byte{0xff}, 32)) }), "group order"},
		{"gamma non-canonical", sk.Public(), alpha, with(func(p *[ProofSize]byte) { copy(p[:32], lenientGamma[:]) }), "non-canonical"},
		{"all zero proof", sk.Public(), alpha, [ProofSize]byte{}, "challenge"},
	}
	for _, enc := range smallOrderEncodings {
		var pk PublicKey
		copy(pk[:], unhex(t, enc))
		cases = append(cases, refusal{"small-order key " + enc[:8], pk, alpha, proof, "small order"})
	}
	var lenientPK PublicKey
	copy(lenientPK[:], lenientGamma[:])
	cases = append(cases, refusal{"non-canonical key", lenientPK, alpha, proof, "non-canonical"})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Verify(tc.pk, tc.alpha, tc.proof)
			if !errors.Is(err, ErrInvalidProof) {
				t.Fatalf("Verify = %x, %v; want ErrInvalidProof", out, err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q does not name %q", err, tc.reason)
			}
			if out != [OutputSize]byte{} {
				t.Errorf("rejected proof returned output %x", out)
			}
		})
	}
}

func TestSmallOrderEncodingsAreSmallOrder(t *testing.T) {
	for _, enc := range smallOrderEncodings {
		p, err := decodePoint(unhex(t, enc))
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) != 1 {
			t.Errorf("%s is not of small order", enc)
		}
	}
}

// TestSmallOrderKeyForgery shows why validate_key is on: with the identity as
// public key, Gamma = identity and s = k satisfy both verification equations
// for any input, so a "proof" can be made without a secret key.
func TestSmallOrderKeyForgery(t *testing.T) {
	var identity PublicKey
	copy(identity[:], edwards25519.NewIdentityPoint().Bytes())
	alpha := []byte("any slot at all")
	h := hashToCurve(identity, alpha)
	k := nonce(&[32]byte{1}, h.Bytes())
	gamma := edwards25519.NewIdentityPoint()
	c := challenge(identity[:], h.Bytes(), gamma.Bytes(),
		new(edwards25519.Point).ScalarBaseMult(k).Bytes(), new(edwards25519.Point).ScalarMult(k, h).Bytes())
	var forged [ProofSize]byte
	copy(forged[:32], gamma.Bytes())
	copy(forged[32:48], c[:])
	copy(forged[48:], k.Bytes())

	// The forgery passes the equations of RFC 9381 §5.3 steps 7–10 …
	y, _ := decodePoint(identity[:])
	g, cc, s, err := decodeProof(forged)
	if err != nil {
		t.Fatal(err)
	}
	negC := new(edwards25519.Scalar).Negate(challengeScalar(cc))
	u := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(negC, y, s)
	v := new(edwards25519.Point).VarTimeMultiScalarMult([]*edwards25519.Scalar{s, negC}, []*edwards25519.Point{h, g})
	if challenge(identity[:], h.Bytes(), g.Bytes(), u.Bytes(), v.Bytes()) != cc {
		t.Fatal("forgery construction is wrong: the equations do not hold")
	}
	// … and only validate_key stops it.
	if _, err := Verify(identity, alpha, forged); !errors.Is(err, ErrInvalidProof) || !strings.Contains(err.Error(), "small order") {
		t.Errorf("Verify(forgery) = %v, want a small-order rejection", err)
	}
}

func TestProofToHashRejectsMalformed(t *testing.T) {
	var proof [ProofSize]byte
	copy(proof[:], unhex(t, rfc9381Vectors[0].pi))
	copy(proof[48:], bytes.Repeat([]byte{0xff}, 32))
	if _, err := ProofToHash(proof); !errors.Is(err, ErrInvalidProof) {
		t.Errorf("ProofToHash(s = 2^256-1) = %v, want ErrInvalidProof", err)
	}
}

// TestProveVerifyRoundTrip: for any key and input, Prove's proof verifies
// and Verify returns Prove's output; any single flipped bit of the proof, or
// a different input, is rejected.
func TestProveVerifyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.SliceOfN(rapid.Byte(), SeedSize, SeedSize).Draw(t, "seed")
		alpha := rapid.SliceOfN(rapid.Byte(), 0, 100).Draw(t, "alpha")
		sk, err := NewKeyFromSeed(seed)
		if err != nil {
			t.Fatal(err)
		}
		proof, output := Prove(sk, alpha)
		again, _ := Prove(sk, alpha)
		if again != proof {
			t.Fatal("Prove is not deterministic")
		}
		got, err := Verify(sk.Public(), alpha, proof)
		if err != nil {
			t.Fatalf("Verify(Prove) = %v", err)
		}
		if got != output {
			t.Fatalf("Verify output %x != Prove output %x", got, output)
		}

		bit := rapid.IntRange(0, ProofSize*8-1).Draw(t, "bit")
		tampered := proof
		tampered[bit/8] ^= 1 << (bit % 8)
		if _, err := Verify(sk.Public(), alpha, tampered); !errors.Is(err, ErrInvalidProof) {
			t.Fatalf("proof with bit %d flipped verified", bit)
		}
		other := append(append([]byte{}, alpha...), rapid.Byte().Draw(t, "extra"))
		if _, err := Verify(sk.Public(), other, proof); !errors.Is(err, ErrInvalidProof) {
			t.Fatal("proof verified for a different input")
		}
	})
}

func BenchmarkProve(b *testing.B) {
	sk, _ := NewKeyFromSeed(make([]byte, SeedSize))
	alpha := make([]byte, 32)
	for b.Loop() {
		Prove(sk, alpha)
	}
}

func BenchmarkVerify(b *testing.B) {
	sk, _ := NewKeyFromSeed(make([]byte, SeedSize))
	alpha := make([]byte, 32)
	proof, _ := Prove(sk, alpha)
	for b.Loop() {
		if _, err := Verify(sk.Public(), alpha, proof); err != nil {
			b.Fatal(err)
		}
	}
}
