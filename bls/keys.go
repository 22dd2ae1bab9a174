package bls

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	blst "github.com/supranational/blst/bindings/go"
)

// Sizes of the encodings, in bytes.
const (
	SecretKeySize = 32 // big-endian scalar
	PublicKeySize = 96 // compressed G2 point
	SignatureSize = 48 // compressed G1 point
	// SeedSize is the least input key material KeyFromSeed accepts.
	SeedSize = 32
)

// Errors of decoding; each is wrapped with the detail.
var (
	ErrInvalidSecretKey = errors.New("bls: invalid secret key")
	ErrInvalidPublicKey = errors.New("bls: invalid public key")
	ErrInvalidSignature = errors.New("bls: invalid signature")
)

// SecretKey is a signing key: a scalar in [1, r).
type SecretKey struct{ s *blst.SecretKey }

// PublicKey is a verification key: a G2 point of the subgroup, not the
// identity.
type PublicKey struct{ p blst.P2Affine }

// KeyFromSeed derives a secret key from at least SeedSize bytes of input key
// material with the draft's KeyGen (HKDF-SHA-256); the same seed always
// gives the same key.
func KeyFromSeed(seed []byte) (*SecretKey, error) {
	if len(seed) < SeedSize {
		return nil, fmt.Errorf("%w: seed of %d bytes, want at least %d", ErrInvalidSecretKey, len(seed), SeedSize)
	}
	return &SecretKey{s: blst.KeyGen(seed)}, nil
}

// GenerateKey draws a secret key from SeedSize bytes of random
// (crypto/rand when nil).
func GenerateKey(random io.Reader) (*SecretKey, error) {
	if random == nil {
		random = rand.Reader
	}
	var seed [SeedSize]byte
	if _, err := io.ReadFull(random, seed[:]); err != nil {
		return nil, fmt.Errorf("bls: generating a key: %w", err)
	}
	defer clear(seed[:])
	return KeyFromSeed(seed[:])
}

// SecretKeyFromBytes decodes a big-endian scalar, refusing zero and values
// not below the group order.
func SecretKeyFromBytes(b []byte) (*SecretKey, error) {
	if len(b) != SecretKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidSecretKey, len(b), SecretKeySize)
	}
	s := new(blst.SecretKey).Deserialize(b)
	if s == nil {
		return nil, fmt.Errorf("%w: zero or not below the group order", ErrInvalidSecretKey)
	}
	return &SecretKey{s: s}, nil
}

// Bytes returns the big-endian scalar.
func (sk *SecretKey) Bytes() [SecretKeySize]byte { return [SecretKeySize]byte(sk.s.Serialize()) }

// PublicKey returns the key's public half.
func (sk *SecretKey) PublicKey() *PublicKey {
	pk := new(PublicKey)
	pk.p.From(sk.s)
	return pk
}

// PublicKeyFromBytes decodes a compressed G2 point, refusing encodings that
// are not canonical, points off the curve or outside the subgroup, and the
// identity (which would verify the identity signature on any message).
func PublicKeyFromBytes(b []byte) (*PublicKey, error) {
	if len(b) != PublicKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidPublicKey, len(b), PublicKeySize)
	}
	pk := new(PublicKey)
	if pk.p.Uncompress(b) == nil {
		return nil, fmt.Errorf("%w: not a compressed G2 point", ErrInvalidPublicKey)
	}
	if !pk.p.KeyValidate() {
		return nil, fmt.Errorf("%w: the identity or not in the subgroup", ErrInvalidPublicKey)
	}
	return pk, nil
}

// Bytes returns the compressed point.
func (pk *PublicKey) Bytes() [PublicKeySize]byte { return [PublicKeySize]byte(pk.p.Compress()) }

// Equal reports whether pk and other are the same key.
func (pk *PublicKey) Equal(other *PublicKey) bool { return pk.p.Equals(&other.p) }
