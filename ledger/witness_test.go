package ledger

import (
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"testing"

	"filippo.io/edwards25519"
	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
	"pgregory.net/rapid"
)

// stdlibVerdict is the witness check as the ledger had it, with
// crypto/ed25519.Verify: the oracle every verdict here is compared with.
func stdlibVerdict(tx *Tx) error {
	for i, w := range tx.Witnesses {
		if !ed25519.Verify(w.VKey[:], tx.id[:], w.Signature[:]) {
			return fmt.Errorf("%w: witness %d (vkey %s)", ErrBadWitness, i, hex.EncodeToString(w.VKey[:]))
		}
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// orderL is the order of the prime-order subgroup, little-endian.
var orderL = [32]byte{
	0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
}

// addLE is a + b on 256-bit little-endian numbers (callers keep it below
// 2^256).
func addLE(a, b [32]byte) [32]byte {
	var out [32]byte
	carry := 0
	for i := range out {
		s := int(a[i]) + int(b[i]) + carry
		out[i], carry = byte(s), s>>8
	}
	return out
}

// torsion returns the eight points of order dividing 8, [i]T for a point
// T of order 8, and checks T's order.
func torsion(t testing.TB) [8]*edwards25519.Point {
	enc, _ := hex.DecodeString("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
	t8, err := new(edwards25519.Point).SetBytes(enc)
	if err != nil {
		t.Fatal(err)
	}
	id := edwards25519.NewIdentityPoint()
	four := new(edwards25519.Point).Double(new(edwards25519.Point).Double(t8))
	if new(edwards25519.Point).MultByCofactor(t8).Equal(id) != 1 || four.Equal(id) == 1 {
		t.Fatal("the torsion point is not of order 8")
	}
	var pts [8]*edwards25519.Point
	pts[0] = id
	for i := 1; i < 8; i++ {
		pts[i] = new(edwards25519.Point).Add(pts[i-1], t8)
	}
	return pts
}

// specialEncodings are encodings of points a verifier must get right: the
// eight small-order points, canonical, and every non-canonical encoding
// there is (y ≥ p for the 19 values of y below 19, either sign; x = 0 with
// the sign bit set), whether it decodes or not.
func specialEncodings(t testing.TB) [][32]byte {
	var out [][32]byte
	for _, p := range torsion(t) {
		out = append(out, [32]byte(p.Bytes()))
	}
	// p = 2^255 - 19, little-endian: ed ff … ff 7f.
	for y := range 19 {
		var e [32]byte
		e[0] = byte(0xed + y) // 0xed + 18 = 0xff: no carry
		for i := 1; i < 31; i++ {
			e[i] = 0xff
		}
		e[31] = 0x7f
		out = append(out, e)
		e[31] |= 0x80
		out = append(out, e)
	}
	// The points with x = 0 are y = 1 (the identity) and y = -1, of order
	// 2: their encodings with the sign bit set.
	identity := [32]byte{0x01, 31: 0x80}
	minusOne := [32]byte{0xec}
	for i := 1; i < 31; i++ {
		minusOne[i] = 0xff
	}
	minusOne[31] = 0xff
	return append(out, identity, minusOne)
}

// scalarFrom is seed's bytes hashed to a scalar.
func scalarFrom(seed ...byte) *edwards25519.Scalar {
	h := sha512.Sum512(seed)
	s, _ := edwards25519.NewScalar().SetUniformBytes(h[:])
	return s
}

// schnorr is S = r + H(R‖A‖msg)·a for the encodings R and A as given,
// which need not be [r]B and [a]B: how a crafted signature is made.
func schnorr(rEnc, aEnc [32]byte, r, a *edwards25519.Scalar, msg []byte) [64]byte {
	h := sha512.New()
	h.Write(rEnc[:])
	h.Write(aEnc[:])
	h.Write(msg)
	k, _ := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil))
	var sig [64]byte
	copy(sig[:32], rEnc[:])
	copy(sig[32:], edwards25519.NewScalar().MultiplyAdd(k, a, r).Bytes())
	return sig
}

// fataler is what checkWitness and checkBatch need of a *testing.T or a
// *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkWitness compares the verdicts on w over msg, plain and with the key
// expanded, with crypto/ed25519's, and returns the latter.
func checkWitness(t fataler, w VKeyWitness, msg []byte) bool {
	t.Helper()
	want := ed25519.Verify(w.VKey[:], msg, w.Signature[:])
	if got := verifyWitness(&w, msg, nil); got != want {
		t.Fatalf("vkey %x sig %x msg %x: verdict %v, crypto/ed25519 %v", w.VKey, w.Signature, msg, got, want)
	}
	if exp, err := voi.NewExpandedPublicKey(w.VKey[:]); err == nil {
		if got := verifyWitness(&w, msg, exp); got != want {
			t.Fatalf("vkey %x sig %x msg %x: expanded verdict %v, crypto/ed25519 %v", w.VKey, w.Signature, msg, got, want)
		}
	} else if want {
		t.Fatalf("vkey %x does not expand, and crypto/ed25519 accepts its signature", w.VKey)
	}
	return want
}

// checkBatch compares VerifySignatures's verdicts on txs, and those of the
// work ahead of ApplyBatch, with crypto/ed25519's, tx by tx.
func checkBatch(t fataler, txs []*Tx) {
	t.Helper()
	got := VerifySignatures(txs)
	items := make([]decodedTx, len(txs))
	for i, tx := range txs {
		items[i] = decodedTx{tx: tx}
	}
	verifyAhead(items, 2)
	for i, tx := range txs {
		want := errString(stdlibVerdict(tx))
		if got[i].Tx() != tx || errString(got[i].Err()) != want {
			t.Fatalf("tx %d of %d: VerifySignatures %q, crypto/ed25519 %q", i, len(txs), errString(got[i].Err()), want)
		}
		if !items[i].witnesses.verified || errString(items[i].witnesses.sigErr) != want {
			t.Fatalf("tx %d of %d: verified ahead %q, crypto/ed25519 %q", i, len(txs), errString(items[i].witnesses.sigErr), want)
		}
		if errString(verifySignatures(tx)) != want {
			t.Fatalf("tx %d: verifySignatures %q, crypto/ed25519 %q", i, errString(verifySignatures(tx)), want)
		}
	}
}

// witnessTx is a tx with nothing but an id and witnesses: all the
// signature checks read.
func witnessTx(id [32]byte, ws ...VKeyWitness) *Tx { return &Tx{id: id, Witnesses: ws} }

func TestStdlibRulesAreVoisStdLibPreset(t *testing.T) {
	if *stdlibRules.Verify != *voi.VerifyOptionsStdLib {
		t.Fatalf("stdlibRules %+v, voi's VerifyOptionsStdLib %+v", *stdlibRules.Verify, *voi.VerifyOptionsStdLib)
	}
	if stdlibRules.Hash != 0 || stdlibRules.Context != "" {
		t.Fatal("stdlibRules must verify plain Ed25519")
	}
}

// Every pairing of special encodings as key and as R, with S = 0 and a
// random S, and for a canonical R also 1, L - 1 and non-canonical S (L,
// L + 1, S + 7L, top bits set), over two messages (the second with S = 0
// and the random S only): each verdict is crypto/ed25519's, plain and expanded,
// and in batches where each key recurs (so it is expanded once). Some of
// them verify (a small-order key and R with S = 0; an identity key, in any
// of its encodings, with R = [S]B), so both verdicts are exercised.
func TestWitnessVerdictsSpecialPoints(t *testing.T) {
	encs := specialEncodings(t)
	random := scalarFrom(7)
	var sB [32]byte
	copy(sB[:], new(edwards25519.Point).ScalarBaseMult(random).Bytes())
	rs := append(append([][32]byte(nil), encs...), sB)
	var ss [][32]byte
	for _, s := range []*edwards25519.Scalar{edwards25519.NewScalar(), random, scalarFrom()} {
		ss = append(ss, [32]byte(s.Bytes()))
	}
	one := [32]byte{1}
	lMinus1 := orderL
	lMinus1[0]--
	high := [32]byte(random.Bytes())
	high[31] |= 0xe0
	ss = append(ss, one, lMinus1, orderL, addLE(orderL, one), high)
	r7 := [32]byte(random.Bytes())
	for range 7 {
		r7 = addLE(r7, orderL)
	}
	ss = append(ss, r7)

	accepted, refused := 0, 0
	for m, msg := range [][32]byte{{}, {0xde, 0xad}} {
		var txs []*Tx
		for _, a := range encs {
			var ws []VKeyWitness
			for j, r := range rs {
				sset := ss
				if m > 0 || j >= 8 && j < len(encs) { // a second message, or a non-canonical R
					sset = ss[:2]
				}
				for _, s := range sset {
					var w VKeyWitness
					w.VKey = a
					copy(w.Signature[:32], r[:])
					copy(w.Signature[32:], s[:])
					if checkWitness(t, w, msg[:]) {
						accepted++
					} else {
						refused++
					}
					ws = append(ws, w)
					txs = append(txs, witnessTx(msg, w))
				}
			}
			// All of a key's witnesses in one tx: its first bad one is named.
			txs = append(txs, witnessTx(msg, ws...))
		}
		if m == 0 {
			checkBatch(t, txs)
		}
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("%d accepted, %d refused: the table must exercise both", accepted, refused)
	}
	t.Logf("%d accepted, %d refused", accepted, refused)
}

// witnessKind is a way to make a witness, honest or malleated.
type witnessKind int

const (
	honest       witnessKind = iota
	flippedBit               // an honest witness with one bit of its key or signature flipped
	sPlusL                   // S + kL, k in 1..7: the same S mod L, non-canonical
	sHighBits                // S with some of its three top bits set
	torsionR                 // R + T for a small-order T ≠ 0, signed over that R
	torsionA                 // a key [a]B + T, signed honestly over its encoding
	smallOrderAR             // key and R small-order or non-canonical, S = 0 or random
	identityKey              // an identity key, any encoding, R = [S]B
	randomBytes              // key and signature drawn at random
	witnessKinds
)

// witnessWorld draws witnesses of every kind from small pools of keys and
// points, so keys recur within a batch.
type witnessWorld struct {
	keys    []ed25519.PrivateKey
	torsion [8]*edwards25519.Point
	encs    [][32]byte // specialEncodings
}

func newWitnessWorld(t testing.TB) *witnessWorld {
	w := &witnessWorld{torsion: torsion(t), encs: specialEncodings(t)}
	for i := range 4 {
		w.keys = append(w.keys, testKey(byte(0x40+i)))
	}
	return w
}

func (w *witnessWorld) draw(t *rapid.T, msg []byte) (VKeyWitness, witnessKind) {
	kind := witnessKind(rapid.IntRange(0, int(witnessKinds)-1).Draw(t, "kind"))
	var out VKeyWitness
	honestWitness := func() {
		k := w.keys[rapid.IntRange(0, len(w.keys)-1).Draw(t, "key")]
		copy(out.VKey[:], k.Public().(ed25519.PublicKey))
		copy(out.Signature[:], ed25519.Sign(k, msg))
	}
	nonce := func() *edwards25519.Scalar { return scalarFrom(rapid.SliceOfN(rapid.Byte(), 8, 8).Draw(t, "nonce")...) }
	smallOrder := func(label string) *edwards25519.Point {
		return w.torsion[rapid.IntRange(1, 7).Draw(t, label)]
	}
	switch kind {
	case honest:
		honestWitness()
	case flippedBit:
		honestWitness()
		bit := rapid.IntRange(0, 8*(32+64)-1).Draw(t, "bit")
		if bit < 8*32 {
			out.VKey[bit/8] ^= 1 << (bit % 8)
		} else {
			bit -= 8 * 32
			out.Signature[bit/8] ^= 1 << (bit % 8)
		}
	case sPlusL:
		honestWitness()
		s := [32]byte(out.Signature[32:])
		for range rapid.IntRange(1, 7).Draw(t, "k") {
			s = addLE(s, orderL)
		}
		copy(out.Signature[32:], s[:])
	case sHighBits:
		honestWitness()
		out.Signature[63] |= byte(rapid.IntRange(1, 7).Draw(t, "top bits")) << 5
	case torsionR:
		a := scalarFrom(byte(rapid.IntRange(0, 3).Draw(t, "secret")))
		out.VKey = [32]byte(new(edwards25519.Point).ScalarBaseMult(a).Bytes())
		r := nonce()
		rPt := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(r), smallOrder("T"))
		out.Signature = schnorr([32]byte(rPt.Bytes()), out.VKey, r, a, msg)
	case torsionA:
		a := scalarFrom(byte(rapid.IntRange(0, 3).Draw(t, "secret")))
		aPt := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(a), smallOrder("T"))
		out.VKey = [32]byte(aPt.Bytes())
		r := nonce()
		out.Signature = schnorr([32]byte(new(edwards25519.Point).ScalarBaseMult(r).Bytes()), out.VKey, r, a, msg)
	case smallOrderAR:
		out.VKey = w.encs[rapid.IntRange(0, len(w.encs)-1).Draw(t, "A")]
		copy(out.Signature[:32], w.encs[rapid.IntRange(0, len(w.encs)-1).Draw(t, "R")][:])
		if rapid.Bool().Draw(t, "random S") {
			copy(out.Signature[32:], nonce().Bytes())
		}
	case identityKey:
		ids := [][32]byte{[32]byte(edwards25519.NewIdentityPoint().Bytes()), {0x01, 31: 0x80}, {0xee, 1: 0xff, 2: 0xff, 3: 0xff, 4: 0xff, 5: 0xff, 6: 0xff, 7: 0xff, 8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xff, 16: 0xff, 17: 0xff, 18: 0xff, 19: 0xff, 20: 0xff, 21: 0xff, 22: 0xff, 23: 0xff, 24: 0xff, 25: 0xff, 26: 0xff, 27: 0xff, 28: 0xff, 29: 0xff, 30: 0xff, 31: 0x7f}}
		out.VKey = ids[rapid.IntRange(0, len(ids)-1).Draw(t, "identity")]
		s := nonce()
		copy(out.Signature[:32], new(edwards25519.Point).ScalarBaseMult(s).Bytes())
		copy(out.Signature[32:], s.Bytes())
	case randomBytes:
		copy(out.VKey[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "vkey"))
		copy(out.Signature[:], rapid.SliceOfN(rapid.Byte(), 64, 64).Draw(t, "sig"))
	}
	return out, kind
}

// Witnesses of every kind, honest and malleated, in batches of txs of one
// to three witnesses whose keys recur: every witness's verdict, plain and
// expanded, is crypto/ed25519's, and every tx's verdict in the batch is the
// error crypto/ed25519 gives it, naming the same first bad witness.
func TestPropertyWitnessVerdictsMatchStdlib(t *testing.T) {
	world := newWitnessWorld(t)
	rapid.Check(t, func(t *rapid.T) {
		txs := make([]*Tx, rapid.IntRange(1, 24).Draw(t, "txs"))
		for i := range txs {
			id := [32]byte(rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "id"))
			ws := make([]VKeyWitness, rapid.IntRange(1, 3).Draw(t, "witnesses"))
			for j := range ws {
				var kind witnessKind
				ws[j], kind = world.draw(t, id[:])
				ok := checkWitness(t, ws[j], id[:])
				if kind == honest && !ok || kind == sPlusL && ok || kind == sHighBits && ok || kind == torsionR && ok {
					t.Fatalf("kind %d: crypto/ed25519 says %v", kind, ok)
				}
			}
			txs[i] = witnessTx(id, ws...)
		}
		checkBatch(t, txs)
	})
}

// A batch of honest witnesses with one bad at its start, middle or end (a
// flipped bit, S + L, R moved by a small-order point): that tx alone is
// refused, with crypto/ed25519's error, and every other tx passes, in
// batches of sizes on either side of the work ahead's chunk.
func TestWitnessBatchOneBad(t *testing.T) {
	ts := torsion(t)
	keys := []ed25519.PrivateKey{testKey(0x50), testKey(0x51), testKey(0x52)}
	a := scalarFrom(0x60)
	aEnc := [32]byte(new(edwards25519.Point).ScalarBaseMult(a).Bytes())
	spoil := map[string]func(w *VKeyWitness, id [32]byte){
		"flipped bit": func(w *VKeyWitness, _ [32]byte) { w.Signature[40] ^= 4 },
		"S + L": func(w *VKeyWitness, _ [32]byte) {
			copy(w.Signature[32:], func() []byte { s := addLE([32]byte(w.Signature[32:]), orderL); return s[:] }())
		},
		"torsion R": func(w *VKeyWitness, id [32]byte) {
			r := scalarFrom(id[:]...)
			rPt := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(r), ts[4])
			w.VKey = aEnc
			w.Signature = schnorr([32]byte(rPt.Bytes()), aEnc, r, a, id[:])
		},
	}
	for _, n := range []int{1, 2, 8, aheadChunk + 1, 2*aheadChunk + 3} {
		for _, at := range []int{0, n / 2, n - 1} {
			for name, bad := range spoil {
				t.Run(fmt.Sprintf("%d txs, bad at %d, %s", n, at, name), func(t *testing.T) {
					txs := make([]*Tx, n)
					for i := range txs {
						id := [32]byte{byte(i), byte(i >> 8), 0x77}
						k := keys[i%len(keys)]
						var w VKeyWitness
						copy(w.VKey[:], k.Public().(ed25519.PublicKey))
						copy(w.Signature[:], ed25519.Sign(k, id[:]))
						if i == at {
							bad(&w, id)
						}
						txs[i] = witnessTx(id, w)
					}
					checkBatch(t, txs)
					got := VerifySignatures(txs)
					for i := range got {
						if (got[i].Err() != nil) != (i == at) {
							t.Fatalf("tx %d: %v (the bad one is %d)", i, got[i].Err(), at)
						}
					}
				})
			}
		}
	}
}

// Why batches are not verified by a batch equation: the signatures a
// random linear combination can check are those of the cofactored
// equation, and that equation accepts a signature whose R is moved by a
// small-order point, which crypto/ed25519 (and so this ledger) refuses.
// voi's BatchVerifier with a cofactored preset accepts it; with the
// stdlib's rules it refuses it, but then it verifies entry by entry.
func TestCofactoredBatchAcceptsWhatStdlibRefuses(t *testing.T) {
	ts := torsion(t)
	a, r := scalarFrom(1), scalarFrom(2)
	aEnc := [32]byte(new(edwards25519.Point).ScalarBaseMult(a).Bytes())
	msg := []byte("tx id")
	rPt := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(r), ts[1])
	sig := schnorr([32]byte(rPt.Bytes()), aEnc, r, a, msg)
	if ed25519.Verify(aEnc[:], msg, sig[:]) {
		t.Fatal("crypto/ed25519 accepts an R moved by a point of order 8")
	}
	cofactored := voi.NewBatchVerifier()
	honestKey := testKey(9)
	cofactored.AddWithOptions(voi.PublicKey(honestKey.Public().(ed25519.PublicKey)), msg, ed25519.Sign(honestKey, msg), &voi.Options{Verify: voi.VerifyOptionsFIPS_186_5})
	cofactored.AddWithOptions(aEnc[:], msg, sig[:], &voi.Options{Verify: voi.VerifyOptionsFIPS_186_5})
	if !cofactored.VerifyBatchOnly(nil) {
		t.Fatal("the cofactored batch equation refuses it: the reason given for not using it no longer holds")
	}
	w := VKeyWitness{VKey: aEnc, Signature: sig}
	if verifyWitness(&w, msg, nil) {
		t.Fatal("the ledger accepts it")
	}
}
