package vrf

import (
	"crypto/sha512"
	"slices"

	"filippo.io/edwards25519"
	"filippo.io/edwards25519/field"
)

// This file is the RFC 9380 suite edwards25519_XMD:SHA-512_ELL2_NU_
// (§8.5): encode_to_curve with expand_message_xmd over SHA-512, the
// Elligator 2 map to curve25519 and the rational map to edwards25519.

// fieldBytes is L of RFC 9380 §5: ceil((ceil(log2(p)) + k) / 8) with
// p = 2^255 - 19 and k = 128.
const fieldBytes = 48

// Curve constants. They are computed once and never written afterwards.
var (
	feOne = new(field.Element).One()
	// feJ is J = 486662, the A coefficient of curve25519 (K = 1).
	feJ = feFromUint32(486662)
	// feSqrtMinus486664 is c1 of RFC 9380 Appendix G.2.2: the square root
	// of -486664 with sgn0 = 0 (SqrtRatio returns the non-negative root).
	feSqrtMinus486664 = func() *field.Element {
		minus := new(field.Element).Negate(feFromUint32(486664))
		r, wasSquare := new(field.Element).SqrtRatio(minus, feOne)
		if wasSquare != 1 {
			panic("vrf: -486664 is not a square") // unreachable: p ≡ 5 mod 8 and it is
		}
		return r
	}()
)

func feFromUint32(n uint32) *field.Element {
	return new(field.Element).Mult32(new(field.Element).One(), n)
}

// encodeToCurve is encode_to_curve (RFC 9380 §3) for this suite:
// hash_to_field with count 1, map_to_curve, clear_cofactor.
func encodeToCurve(msg []byte, dst string) *edwards25519.Point {
	u := hashToField(msg, dst)
	q := mapToCurve(u)
	// clear_cofactor: h_eff = 8 for edwards25519 (RFC 9380 §8.5).
	return new(edwards25519.Point).MultByCofactor(q)
}

// hashToField is hash_to_field(msg, 1) of RFC 9380 §5.2 over GF(2^255-19):
// L = 48 uniform bytes, read as a big-endian integer (OS2IP), reduced mod p.
func hashToField(msg []byte, dst string) *field.Element {
	uniform := expandMessageXMD(msg, []byte(dst), fieldBytes)
	// SetWideBytes takes 64 little-endian bytes: reverse the big-endian
	// 48 bytes into the low end of a zero buffer.
	var wide [64]byte
	for i, b := range uniform {
		wide[fieldBytes-1-i] = b
	}
	u, err := new(field.Element).SetWideBytes(wide[:])
	if err != nil {
		panic(err) // unreachable: the buffer is 64 bytes
	}
	return u
}

// expandMessageXMD is expand_message_xmd of RFC 9380 §5.3.1 with SHA-512
// (b_in_bytes = 64, s_in_bytes = 128). The callers in this package pass a
// fixed DST and length, so the §5.3.1 aborts can only be programming errors.
func expandMessageXMD(msg, dst []byte, lenInBytes int) []byte {
	ell := (lenInBytes + sha512.Size - 1) / sha512.Size
	if ell > 255 || lenInBytes > 65535 || len(dst) > 255 {
		panic("vrf: expand_message_xmd parameters out of range")
	}
	// DST_prime = DST ‖ I2OSP(len(DST), 1)
	dstPrime := append(slices.Clip(dst), byte(len(dst)))

	// b_0 = H(Z_pad ‖ msg ‖ l_i_b_str ‖ I2OSP(0, 1) ‖ DST_prime)
	h := sha512.New()
	h.Write(make([]byte, sha512.BlockSize))
	h.Write(msg)
	h.Write([]byte{byte(lenInBytes >> 8), byte(lenInBytes), 0})
	h.Write(dstPrime)
	b0 := h.Sum(nil)

	// b_1 = H(b_0 ‖ I2OSP(1, 1) ‖ DST_prime)
	// b_i = H(strxor(b_0, b_(i-1)) ‖ I2OSP(i, 1) ‖ DST_prime)
	uniform := make([]byte, 0, ell*sha512.Size)
	prev := make([]byte, sha512.Size)
	for i := 1; i <= ell; i++ {
		for j := range prev {
			prev[j] ^= b0[j] // for i = 1, prev is zero and this is b_0 itself
		}
		h.Reset()
		h.Write(prev)
		h.Write([]byte{byte(i)})
		h.Write(dstPrime)
		prev = h.Sum(prev[:0])
		uniform = append(uniform, prev...)
	}
	return uniform[:lenInBytes]
}

// mapToCurve is map_to_curve_elligator2_edwards25519 (RFC 9380 §6.8.2): the
// Elligator 2 map to curve25519 followed by the rational map to edwards25519.
// The result is a curve point that may have a small-order component.
func mapToCurve(u *field.Element) *edwards25519.Point {
	s, t := mapToCurve25519(u)

	// Rational map (RFC 9380 §6.8.2, Appendix G.2.2):
	//   v = c1 · s / t,  w = (s - 1) / (s + 1),
	// and the identity (0, 1) where t = 0 or s = -1.
	sPlus1 := new(field.Element).Add(s, feOne)
	sMinus1 := new(field.Element).Subtract(s, feOne)
	den := new(field.Element).Multiply(t, sPlus1)
	exceptional := den.Equal(new(field.Element).Zero())
	inv := new(field.Element).Invert(den) // 1/(t·(s+1)); Invert(0) = 0
	v := new(field.Element).Multiply(feSqrtMinus486664, s)
	v.Multiply(v, sPlus1)
	v.Multiply(v, inv)
	w := new(field.Element).Multiply(sMinus1, t)
	w.Multiply(w, inv)
	v.Select(new(field.Element).Zero(), v, exceptional)
	w.Select(feOne, w, exceptional)

	// Affine (v, w) in extended coordinates: X = v, Y = w, Z = 1, T = v·w.
	p, err := new(edwards25519.Point).SetExtendedCoordinates(v, w, feOne, new(field.Element).Multiply(v, w))
	if err != nil {
		panic("vrf: Elligator 2 produced a point off the curve") // unreachable
	}
	return p
}

// mapToCurve25519 is map_to_curve_elligator2 of RFC 9380 §6.7.1 for
// curve25519 (J = 486662, K = 1, Z = 2). It returns the Montgomery point
// (s, t).
func mapToCurve25519(u *field.Element) (s, t *field.Element) {
	// 1. x1 = -(J / K) · inv0(1 + Z·u²). 1 + 2u² is never 0: -1/2 is not a
	//    square mod p. 2. (x1 == 0) cannot happen for the same reason.
	tv := new(field.Element).Square(u)
	tv.Add(tv, tv)
	tv.Add(tv, feOne)
	x1 := new(field.Element).Invert(tv)
	x1.Multiply(x1, feJ)
	x1.Negate(x1)
	// 3. gx1 = x1³ + (J / K)·x1² + x1 / K²
	gx1 := curve25519RHS(x1)
	// 4. x2 = -x1 - J / K
	x2 := new(field.Element).Add(x1, feJ)
	x2.Negate(x2)
	// 5. gx2 = x2³ + (J / K)·x2² + x2 / K²
	gx2 := curve25519RHS(x2)

	// 6. If is_square(gx1): x = x1, y = sqrt(gx1) with sgn0(y) == 1.
	// 7. Else:              x = x2, y = sqrt(gx2) with sgn0(y) == 0.
	// SqrtRatio returns the root with sgn0 = 0 (the non-negative one).
	y1, gx1IsSquare := new(field.Element).SqrtRatio(gx1, feOne)
	y1.Negate(y1)
	y2, _ := new(field.Element).SqrtRatio(gx2, feOne)
	x := new(field.Element).Select(x1, x2, gx1IsSquare)
	y := new(field.Element).Select(y1, y2, gx1IsSquare)

	// 8–10. s = x·K, t = y·K with K = 1.
	return x, y
}

// curve25519RHS is g(x) = x³ + J·x² + x, the right-hand side of the
// Montgomery equation y² = g(x).
func curve25519RHS(x *field.Element) *field.Element {
	g := new(field.Element).Add(x, feJ) // x + J
	g.Multiply(g, x)                    // x² + J·x
	g.Add(g, feOne)                     // x² + J·x + 1
	return g.Multiply(g, x)             // x³ + J·x² + x
}
