package vrf

import (
	"bytes"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"fmt"

	"filippo.io/edwards25519"
)

// ErrInvalidProof is wrapped by every verification failure: a malformed or
// small-order public key, a malformed proof, or a proof that does not check.
var ErrInvalidProof = errors.New("vrf: invalid proof")

// Domain separators of RFC 9381 §5.2 and §5.4.3.
const (
	proofToHashFront = 0x03
	challengeFront   = 0x02
	domainBack       = 0x00
)

// Prove computes the proof pi and the output beta for input alpha
// (RFC 9381 §5.1, then §5.2 for beta).
func Prove(sk *SecretKey, alpha []byte) (proof [ProofSize]byte, output [OutputSize]byte) {
	// 1. x and Y = x·B come from the key (NewKeyFromSeed).
	// 2. H = ECVRF_encode_to_curve(encode_to_curve_salt = PK_string, alpha).
	h := hashToCurve(sk.public, alpha)
	// 3. h_string = point_to_string(H).
	hString := h.Bytes()
	// 4. Gamma = x·H.
	gamma := new(edwards25519.Point).ScalarMult(&sk.x, h)
	// 5. k = ECVRF_nonce_generation(SK, h_string).
	k := nonce(&sk.prefix, hString)
	// 6. c = ECVRF_challenge_generation(Y, H, Gamma, k·B, k·H).
	u := new(edwards25519.Point).ScalarBaseMult(k)
	v := new(edwards25519.Point).ScalarMult(k, h)
	c := challenge(sk.public[:], hString, gamma.Bytes(), u.Bytes(), v.Bytes())
	// 7. s = (k + c·x) mod q.
	s := new(edwards25519.Scalar).MultiplyAdd(challengeScalar(c), &sk.x, k)
	// 8. pi_string = point_to_string(Gamma) ‖ int_to_string(c, cLen) ‖ int_to_string(s, qLen).
	copy(proof[:pointSize], gamma.Bytes())
	copy(proof[pointSize:pointSize+challengeSize], c[:])
	copy(proof[pointSize+challengeSize:], s.Bytes())
	return proof, gammaToHash(gamma)
}

// Verify checks proof against the public key and input alpha (RFC 9381
// §5.3, with validate_key) and returns the output beta it certifies.
func Verify(pk PublicKey, alpha []byte, proof [ProofSize]byte) ([OutputSize]byte, error) {
	// 1–2. Y = string_to_point(PK_string) and ECVRF_validate_key(Y).
	y, err := validateKey(pk)
	if err != nil {
		return [OutputSize]byte{}, fmt.Errorf("%w: %w", ErrInvalidProof, err)
	}
	// 3–5. (Gamma, c, s) = ECVRF_decode_proof(pi_string).
	gamma, c, s, err := decodeProof(proof)
	if err != nil {
		return [OutputSize]byte{}, fmt.Errorf("%w: %w", ErrInvalidProof, err)
	}
	// 6. H = ECVRF_encode_to_curve(encode_to_curve_salt = PK_string, alpha).
	h := hashToCurve(pk, alpha)
	// 7. U = s·B - c·Y.  8. V = s·H - c·Gamma.
	negC := new(edwards25519.Scalar).Negate(challengeScalar(c))
	u := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(negC, y, s)
	v := new(edwards25519.Point).VarTimeMultiScalarMult(
		[]*edwards25519.Scalar{s, negC}, []*edwards25519.Point{h, gamma})
	// 9. c' = ECVRF_challenge_generation(Y, H, Gamma, U, V).
	cPrime := challenge(pk[:], h.Bytes(), gamma.Bytes(), u.Bytes(), v.Bytes())
	// 10. valid iff c = c'; then beta = ECVRF_proof_to_hash(pi_string).
	if subtle.ConstantTimeCompare(c[:], cPrime[:]) != 1 {
		return [OutputSize]byte{}, fmt.Errorf("%w: challenge does not match", ErrInvalidProof)
	}
	return gammaToHash(gamma), nil
}

// ProofToHash returns the output beta of a proof without verifying it
// (RFC 9381 §5.2). Use Verify unless the proof is already known valid.
func ProofToHash(proof [ProofSize]byte) ([OutputSize]byte, error) {
	gamma, _, _, err := decodeProof(proof)
	if err != nil {
		return [OutputSize]byte{}, fmt.Errorf("%w: %w", ErrInvalidProof, err)
	}
	return gammaToHash(gamma), nil
}

// hashToCurve is ECVRF_encode_to_curve for this suite (RFC 9381 §5.4.1.2):
// the RFC 9380 encode_to_curve of encode_to_curve_salt ‖ alpha, with
// encode_to_curve_salt = PK_string and DST = "ECVRF_" ‖
// h2c_suite_ID_string ‖ suite_string.
func hashToCurve(pk PublicKey, alpha []byte) *edwards25519.Point {
	msg := make([]byte, 0, PublicKeySize+len(alpha))
	msg = append(append(msg, pk[:]...), alpha...)
	return encodeToCurve(msg, hashToCurveDST)
}

// nonce is ECVRF_nonce_generation_RFC8032 (RFC 9381 §5.4.2.2):
// k = SHA-512(second half of SHA-512(SK) ‖ h_string) mod q, the string read
// little-endian.
func nonce(prefix *[32]byte, hString []byte) *edwards25519.Scalar {
	d := sha512.New()
	d.Write(prefix[:])
	d.Write(hString)
	k, err := new(edwards25519.Scalar).SetUniformBytes(d.Sum(nil))
	if err != nil {
		panic(err) // unreachable: SHA-512 gives 64 bytes
	}
	return k
}

// challenge is ECVRF_challenge_generation (RFC 9381 §5.4.3): the first cLen
// bytes of SHA-512(suite_string ‖ 0x02 ‖ P1 ‖ … ‖ P5 ‖ 0x00), for the point
// encodings P1..P5 = Y, H, Gamma, U, V.
func challenge(points ...[]byte) [challengeSize]byte {
	d := sha512.New()
	d.Write([]byte{suiteString, challengeFront})
	for _, p := range points {
		d.Write(p)
	}
	d.Write([]byte{domainBack})
	var c [challengeSize]byte
	copy(c[:], d.Sum(nil))
	return c
}

// challengeScalar reads the 16-byte challenge little-endian as a scalar;
// it is always below q.
func challengeScalar(c [challengeSize]byte) *edwards25519.Scalar {
	var wide [scalarSize]byte
	copy(wide[:], c[:])
	s, err := new(edwards25519.Scalar).SetCanonicalBytes(wide[:])
	if err != nil {
		panic(err) // unreachable: 2^128 < q
	}
	return s
}

// gammaToHash is ECVRF_proof_to_hash after decoding (RFC 9381 §5.2):
// beta = SHA-512(suite_string ‖ 0x03 ‖ point_to_string(cofactor·Gamma) ‖ 0x00).
func gammaToHash(gamma *edwards25519.Point) [OutputSize]byte {
	d := sha512.New()
	d.Write([]byte{suiteString, proofToHashFront})
	d.Write(new(edwards25519.Point).MultByCofactor(gamma).Bytes())
	d.Write([]byte{domainBack})
	var beta [OutputSize]byte
	copy(beta[:], d.Sum(nil))
	return beta
}

// decodeProof is ECVRF_decode_proof (RFC 9381 §5.4.4).
func decodeProof(proof [ProofSize]byte) (gamma *edwards25519.Point, c [challengeSize]byte, s *edwards25519.Scalar, err error) {
	// 1–5. Gamma = string_to_point(gamma_string), INVALID if not a point.
	gamma, err = decodePoint(proof[:pointSize])
	if err != nil {
		return nil, c, nil, fmt.Errorf("gamma: %w", err)
	}
	// 6. c = string_to_int(c_string).
	copy(c[:], proof[pointSize:pointSize+challengeSize])
	// 7–8. s = string_to_int(s_string); INVALID if s >= q.
	s, err = new(edwards25519.Scalar).SetCanonicalBytes(proof[pointSize+challengeSize:])
	if err != nil {
		return nil, c, nil, errors.New("s is not below the group order")
	}
	return gamma, c, s, nil
}

// validateKey is string_to_point followed by ECVRF_validate_key
// (RFC 9381 §5.4.5): the key must decode and cofactor·Y must not be the
// identity (a small-order key would let one proof serve many inputs).
func validateKey(pk PublicKey) (*edwards25519.Point, error) {
	y, err := decodePoint(pk[:])
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	if new(edwards25519.Point).MultByCofactor(y).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return nil, errors.New("public key is of small order")
	}
	return y, nil
}

// decodePoint is string_to_point for edwards25519 (RFC 9381 §5.5): the
// decoding of RFC 8032 §5.1.3, which rejects a y coordinate ≥ p and
// x = 0 with the sign bit set. edwards25519.SetBytes accepts those
// non-canonical encodings, so the re-encoding must give the input back.
func decodePoint(b []byte) (*edwards25519.Point, error) {
	p, err := new(edwards25519.Point).SetBytes(b)
	if err != nil {
		return nil, errors.New("not a curve point")
	}
	if !bytes.Equal(p.Bytes(), b) {
		return nil, errors.New("non-canonical point encoding")
	}
	return p, nil
}
