package vrf

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"filippo.io/edwards25519"
	"filippo.io/edwards25519/field"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// rfc9381Vectors are the ECVRF-EDWARDS25519-SHA512-ELL2 examples of RFC 9381
// Appendix B (Examples 19–21; the same values as draft-irtf-cfrg-vrf-13
// Appendix A.4): SK, PK, alpha, the secret scalar x, the encode_to_curve
// output H, the nonce k, U = k·B, V = k·H, the proof pi and the output beta.
var rfc9381Vectors = []struct {
	name                         string
	sk, pk, alpha, x, h, k, u, v string
	pi, beta                     string
}{
	{
		name:  "Example 19",
		sk:    "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
		pk:    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
		alpha: "",
		x:     "307c83864f2833cb427a2ef1c00a013cfdff2768d980c0a3a520f006904de94f",
		h:     "b8066ebbb706c72b64390324e4a3276f129569eab100c26b9f05011200c1bad9",
		k:     "55cbb247af9b8372259a97b2cfec656d78868deb33b203d51b9961c364522400",
		u:     "762f5c178b68f0cddcc1157918edf45ec334ac8e8286601a3256c3bbf858edd9",
		v:     "4652eba1c4612e6fce762977a59420b451e12964adbe4fbecd58a7aeff5860af",
		pi:    "7d9c633ffeee27349264cf5c667579fc583b4bda63ab71d001f89c10003ab46f14adf9a3cd8b8412d9038531e865c341cafa73589b023d14311c331a9ad15ff2fb37831e00f0acaa6d73bc9997b06501",
		beta:  "9d574bf9b8302ec0fc1e21c3ec5368269527b87b462ce36dab2d14ccf80c53cccf6758f058c5b1c856b116388152bbe509ee3b9ecfe63d93c3b4346c1fbc6c54",
	},
	{
		name:  "Example 20",
		sk:    "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
		pk:    "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
		alpha: "72",
		x:     "68bd9ed75882d52815a97585caf4790a7f6c6b3b7f821c5e259a24b02e502e51",
		h:     "76ac3ccb86158a9104dff819b1ca293426d305fd76b39b13c9356d9b58c08e57",
		k:     "9565956daeedf376cad61b829b2a4d21ba1b52e9b3e2457477a64630a9711003",
		u:     "8ec26e77b8cb3114dd2265fe1564a4efb40d109aa3312536d93dfe3d8d80a061",
		v:     "fe799eb5770b4e3a5a27d22518bb631db183c8316bb552155f442c62a47d1c8b",
		pi:    "47b327393ff2dd81336f8a2ef10339112401253b3c714eeda879f12c509072ef055b48372bb82efbdce8e10c8cb9a2f9d60e93908f93df1623ad78a86a028d6bc064dbfc75a6a57379ef855dc6733801",
		beta:  "38561d6b77b71d30eb97a062168ae12b667ce5c28caccdf76bc88e093e4635987cd96814ce55b4689b3dd2947f80e59aac7b7675f8083865b46c89b2ce9cc735",
	},
	{
		name:  "Example 21",
		sk:    "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
		pk:    "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
		alpha: "af82",
		x:     "909a8b755ed902849023a55b15c23d11ba4d7f4ec5c2f51b1325a181991ea95c",
		h:     "13d2a8b5ca32db7e98094a61f656a08c6c964344e058879a386a947a4e189ed1",
		k:     "1fda4077f737098b3f361c33a36cccafd7e9e9b720e1f84011254e25f37eed02",
		u:     "a012f35433df219a88ab0f9481f4e0065d00422c3285f3d34a8b0202f20bac60",
		v:     "fb613986d171b3e98319c7ca4dc44c5dd8314a6e5616c1a4f16ce72bd7a0c25a",
		pi:    "926e895d308f5e328e7aa159c06eddbe56d06846abf5d98c2512235eaa57fdce35b46edfc655bc828d44ad09d1150f31374e7ef73027e14760d42e77341fe05467bb286cc2c9d7fde29120a0b2320d04",
		beta:  "121b7f9b9aaaa29099fc04a94ba52784d44eac976dd1a3cca458733be5cd090a7b5fbd148444f17f8daf1fb55cb04b1ae85a626e30a54b4b0f8abf4a43314a58",
	},
}

func TestRFC9381Vectors(t *testing.T) {
	for _, tv := range rfc9381Vectors {
		t.Run(tv.name, func(t *testing.T) {
			sk, err := NewKeyFromSeed(unhex(t, tv.sk))
			if err != nil {
				t.Fatal(err)
			}
			pk := sk.Public()
			if got := hex.EncodeToString(pk[:]); got != tv.pk {
				t.Errorf("PK = %s, want %s", got, tv.pk)
			}
			// x is given clamped but unreduced; compare modulo q.
			x, err := new(edwards25519.Scalar).SetBytesWithClamping(unhex(t, tv.x))
			if err != nil {
				t.Fatal(err)
			}
			if x.Equal(&sk.x) != 1 {
				t.Errorf("x = %x, want %s (mod q)", sk.x.Bytes(), tv.x)
			}
			alpha := unhex(t, tv.alpha)

			// Intermediate values of ECVRF_prove (RFC 9381 §5.1).
			h := hashToCurve(pk, alpha)
			if got := hex.EncodeToString(h.Bytes()); got != tv.h {
				t.Errorf("H = %s, want %s", got, tv.h)
			}
			k := nonce(&sk.prefix, h.Bytes())
			if got := hex.EncodeToString(k.Bytes()); got != tv.k {
				t.Errorf("k = %s, want %s", got, tv.k)
			}
			if got := hex.EncodeToString(new(edwards25519.Point).ScalarBaseMult(k).Bytes()); got != tv.u {
				t.Errorf("U = %s, want %s", got, tv.u)
			}
			if got := hex.EncodeToString(new(edwards25519.Point).ScalarMult(k, h).Bytes()); got != tv.v {
				t.Errorf("V = %s, want %s", got, tv.v)
			}

			proof, output := Prove(sk, alpha)
			if got := hex.EncodeToString(proof[:]); got != tv.pi {
				t.Errorf("pi = %s, want %s", got, tv.pi)
			}
			if got := hex.EncodeToString(output[:]); got != tv.beta {
				t.Errorf("beta = %s, want %s", got, tv.beta)
			}

			var wantPK PublicKey
			copy(wantPK[:], unhex(t, tv.pk))
			var wantProof [ProofSize]byte
			copy(wantProof[:], unhex(t, tv.pi))
			verified, err := Verify(wantPK, alpha, wantProof)
			if err != nil {
				t.Fatalf("Verify(vector) = %v", err)
			}
			if got := hex.EncodeToString(verified[:]); got != tv.beta {
				t.Errorf("Verify beta = %s, want %s", got, tv.beta)
			}
			hashed, err := ProofToHash(wantProof)
			if err != nil || hashed != verified {
				t.Errorf("ProofToHash = %x, %v; want %x", hashed, err, verified)
			}
		})
	}
}

// TestEncodeToCurveRFC9380 checks the hash-to-curve layer on its own against
// RFC 9380 Appendix J.5.2 (edwards25519_XMD:SHA-512_ELL2_NU_): the field
// element u, the Elligator 2 output Q and the cofactor-cleared P, all as
// big-endian affine coordinates.
func TestEncodeToCurveRFC9380(t *testing.T) {
	const dst = "QUUX-V01-CS02-with-edwards25519_XMD:SHA-512_ELL2_NU_"
	vectors := []struct{ msg, u, qx, qy, px, py string }{
		{"",
			"7f3e7fb9428103ad7f52db32f9df32505d7b427d894c5093f7a0f0374a30641d",
			"42836f691d05211ebc65ef8fcf01e0fb6328ec9c4737c26050471e50803022eb",
			"22cb4aaa555e23bd460262d2130d6a3c9207aa8bbb85060928beb263d6d42a95",
			"1ff2b70ecf862799e11b7ae744e3489aa058ce805dd323a936375a84695e76da",
			"222e314d04a4d5725e9f2aff9fb2a6b69ef375a1214eb19021ceab2d687f0f9b"},
		{"abc",
			"09cfa30ad79bd59456594a0f5d3a76f6b71c6787b04de98be5cd201a556e253b",
			"333e41b61c6dd43af220c1ac34a3663e1cf537f996bab50ab66e33c4bd8e4e19",
			"51b6f178eb08c4a782c820e306b82c6e273ab22e258d972cd0c511787b2a3443",
			"5f13cc69c891d86927eb37bd4afc6672360007c63f68a33ab423a3aa040fd2a8",
			"67732d50f9a26f73111dd1ed5dba225614e538599db58ba30aaea1f5c827fa42"},
		{"abcdef0123456789",
			"475ccff99225ef90d78cc9338e9f6a6bb7b17607c0c4428937de75d33edba941",
			"55186c242c78e7d0ec5b6c9553f04c6aeef64e69ec2e824472394da32647cfc6",
			"5b9ea3c265ee42256a8f724f616307ef38496ef7eba391c08f99f3bea6fa88f0",
			"1dd2fefce934ecfd7aae6ec998de088d7dd03316aa1847198aecf699ba6613f1",
			"2f8a6c24dd1adde73909cada6a4a137577b0f179d336685c4a955a0a8e1a86fb"},
		{"q128_" + strings.Repeat("q", 128),
			"049a1c8bd51bcb2aec339f387d1ff51428b88d0763a91bcdf6929814ac95d03d",
			"024b6e1621606dca8071aa97b43dce4040ca78284f2a527dcf5d0fbfac2b07e7",
			"5102353883d739bdc9f8a3af650342b171217167dcce34f8db57208ec1dfdbf2",
			"35fbdc5143e8a97afd3096f2b843e07df72e15bfca2eaf6879bf97c5d3362f73",
			"2af6ff6ef5ebba128b0774f4296cb4c2279a074658b083b8dcca91f57a603450"},
		{"a512_" + strings.Repeat("a", 512),
			"3cb0178a8137cefa5b79a3a57c858d7eeeaa787b2781be4a362a2f0750d24fa0",
			"3e6368cff6e88a58e250c54bd27d2c989ae9b3acb6067f2651ad282ab8c21cd9",
			"38fb39f1566ca118ae6c7af42810c0bb9767ae5960abb5a8ca792530bfb9447d",
			"6e5e1f37e99345887fc12111575fc1c3e36df4b289b8759d23af14d774b66bff",
			"2c90c3d39eb18ff291d33441b35f3262cdd307162cc97c31bfcc7a4245891a37"},
	}
	for _, tv := range vectors {
		name := tv.msg
		if len(name) > 16 {
			name = name[:16]
		}
		t.Run(name, func(t *testing.T) {
			u := hashToField([]byte(tv.msg), dst)
			if got := bigEndianHex(u); got != tv.u {
				t.Errorf("u = %s, want %s", got, tv.u)
			}
			q := mapToCurve(u)
			if x, y := affine(q); x != tv.qx || y != tv.qy {
				t.Errorf("Q = (%s, %s), want (%s, %s)", x, y, tv.qx, tv.qy)
			}
			p := encodeToCurve([]byte(tv.msg), dst)
			if x, y := affine(p); x != tv.px || y != tv.py {
				t.Errorf("P = (%s, %s), want (%s, %s)", x, y, tv.px, tv.py)
			}
		})
	}
}

func bigEndianHex(e *field.Element) string {
	b := e.Bytes()
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return hex.EncodeToString(b)
}

func affine(p *edwards25519.Point) (x, y string) {
	X, Y, Z, _ := p.ExtendedCoordinates()
	inv := new(field.Element).Invert(Z)
	return bigEndianHex(new(field.Element).Multiply(X, inv)), bigEndianHex(new(field.Element).Multiply(Y, inv))
}

// TestMapToCurveExceptional covers the exceptional case of the rational map
// (RFC 9380 §6.8.2). For u = 0, gx1 = -J is not a square mod p, so Elligator 2
// takes x2 = -x1 - J = 0 and y = 0: the Montgomery point (0, 0) of order 2,
// where t = 0. The rational map must return the identity there instead of
// dividing by zero.
func TestMapToCurveExceptional(t *testing.T) {
	zero := new(field.Element).Zero()
	s, tt := mapToCurve25519(zero)
	if s.Equal(zero) != 1 || tt.Equal(zero) != 1 {
		t.Fatalf("mapToCurve25519(0) = (%s, %s), want (0, 0)", bigEndianHex(s), bigEndianHex(tt))
	}
	if p := mapToCurve(zero); p.Equal(edwards25519.NewIdentityPoint()) != 1 {
		t.Errorf("mapToCurve(0) = %x, want the identity", p.Bytes())
	}
}

func TestSeedLength(t *testing.T) {
	for _, n := range []int{0, 31, 33, 64} {
		if _, err := NewKeyFromSeed(make([]byte, n)); err == nil {
			t.Errorf("NewKeyFromSeed(%d bytes) succeeded", n)
		}
	}
}

func TestKeyLayout(t *testing.T) {
	sk, err := NewKeyFromSeed(unhex(t, rfc9381Vectors[0].sk))
	if err != nil {
		t.Fatal(err)
	}
	b := sk.Bytes()
	seed := sk.Seed()
	pk := sk.Public()
	if !bytes.Equal(b[:SeedSize], seed[:]) || !bytes.Equal(b[SeedSize:], pk[:]) {
		t.Errorf("Bytes() = %x, want seed ‖ pk", b)
	}
	if _, err := GenerateKey(bytes.NewReader(make([]byte, 10))); err == nil {
		t.Error("GenerateKey with a short reader succeeded")
	}
	a, err := GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Public() == c.Public() {
		t.Error("two generated keys are equal")
	}
}
