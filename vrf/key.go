package vrf

import (
	"crypto/rand"
	"crypto/sha512"
	"fmt"
	"io"

	"filippo.io/edwards25519"
)

// Sizes of the encodings of this suite (RFC 9381 §5.5: ptLen = 32,
// cLen = 16, qLen = 32, hLen = 64).
const (
	SeedSize      = 32
	PublicKeySize = 32
	SecretKeySize = SeedSize + PublicKeySize // seed ‖ public key, the libsodium / cardano-cli layout
	ProofSize     = pointSize + challengeSize + scalarSize
	OutputSize    = 64

	pointSize     = 32
	challengeSize = 16
	scalarSize    = 32
)

// The suite's identifiers: suite_string (RFC 9381 §5.5) and the hash-to-curve
// DST "ECVRF_" ‖ h2c_suite_ID_string ‖ suite_string (§5.4.1.2).
const (
	suiteString    = 0x04
	hashToCurveDST = "ECVRF_edwards25519_XMD:SHA-512_ELL2_NU_\x04"
)

// PublicKey is a VRF verification key: the encoding of Y = x·B
// (RFC 8032 §5.1.2 point encoding).
type PublicKey [PublicKeySize]byte

// SecretKey is a VRF signing key, derived from a 32-byte seed by
// NewKeyFromSeed or GenerateKey (the zero value is not a key). It is
// immutable once built and safe for concurrent use.
type SecretKey struct {
	seed   [SeedSize]byte
	x      edwards25519.Scalar // the secret scalar, RFC 8032 §5.1.5 steps 1–3
	prefix [32]byte            // second half of SHA-512(seed), for the nonce (RFC 9381 §5.4.2.2)
	public PublicKey
}

// NewKeyFromSeed derives a key from a 32-byte seed as RFC 9381 §5.5 says for
// edwards25519: the RFC 8032 §5.1.5 key derivation.
func NewKeyFromSeed(seed []byte) (*SecretKey, error) {
	if len(seed) != SeedSize {
		return nil, fmt.Errorf("vrf: seed is %d bytes, want %d", len(seed), SeedSize)
	}
	sk := new(SecretKey)
	copy(sk.seed[:], seed)
	// RFC 8032 §5.1.5: h = SHA-512(seed); the low half, clamped, is x;
	// the high half is the nonce prefix.
	h := sha512.Sum512(seed)
	if _, err := sk.x.SetBytesWithClamping(h[:32]); err != nil {
		panic(err) // unreachable: the input is 32 bytes
	}
	copy(sk.prefix[:], h[32:])
	// RFC 8032 §5.1.5 step 4: Y = x·B.
	y := new(edwards25519.Point).ScalarBaseMult(&sk.x)
	copy(sk.public[:], y.Bytes())
	return sk, nil
}

// GenerateKey draws a seed from random (crypto/rand when nil) and derives a
// key.
func GenerateKey(random io.Reader) (*SecretKey, error) {
	if random == nil {
		random = rand.Reader
	}
	var seed [SeedSize]byte
	if _, err := io.ReadFull(random, seed[:]); err != nil {
		return nil, fmt.Errorf("vrf: reading seed: %w", err)
	}
	return NewKeyFromSeed(seed[:])
}

// Public returns the verification key.
func (sk *SecretKey) Public() PublicKey { return sk.public }

// Seed returns the 32-byte seed the key was derived from.
func (sk *SecretKey) Seed() [SeedSize]byte { return sk.seed }

// Bytes returns seed ‖ public key, the 64-byte layout libsodium and
// cardano-cli use for VRF signing keys.
func (sk *SecretKey) Bytes() [SecretKeySize]byte {
	var b [SecretKeySize]byte
	copy(b[:SeedSize], sk.seed[:])
	copy(b[SeedSize:], sk.public[:])
	return b
}
