package keys

import (
	"fmt"
	"io"

	"github.com/leiosnode/leiosnode/bls"
)

// Envelope types of BLS voting keys, as the Haskell Leios prototype writes
// them (its misspelling included), so its key files load here.
const (
	blsSigningKeyType      = "BlsSigningKey_bls12-381-BLS-Signature-Mininimal-Signature-Size"
	blsVerificationKeyType = "BlsVerificationKey_bls12-381-BLS-Signature-Mininimal-Signature-Size"
)

// GenerateBLSKey draws a BLS voting key from random (crypto/rand when nil).
func GenerateBLSKey(random io.Reader) (*bls.SecretKey, error) {
	return bls.GenerateKey(random)
}

// WriteBLSSigningKey writes the key's big-endian scalar as a BLS signing key
// file (0600).
func WriteBLSSigningKey(path string, key *bls.SecretKey) error {
	b := key.Bytes()
	defer clear(b[:])
	return writeEnvelope(path, newEnvelope(blsSigningKeyType, "BLS12-381 signing key", b[:]))
}

// ReadBLSSigningKey reads a BLS signing key file, refusing a scalar that is
// zero or not below the group order.
func ReadBLSSigningKey(path string) (*bls.SecretKey, error) {
	e, err := readEnvelope(path)
	if err != nil {
		return nil, err
	}
	raw, err := e.payload(bls.SecretKeySize, blsSigningKeyType)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer clear(raw)
	key, err := bls.SecretKeyFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrMalformed, err)
	}
	return key, nil
}

// WriteBLSVerificationKey writes the compressed public key as a BLS
// verification key file (0644).
func WriteBLSVerificationKey(path string, key *bls.PublicKey) error {
	b := key.Bytes()
	return writeEnvelope(path, newEnvelope(blsVerificationKeyType, "BLS12-381 verification key", b[:]))
}

// ReadBLSVerificationKey reads a BLS verification key file, refusing a point
// outside the subgroup or the identity.
func ReadBLSVerificationKey(path string) (*bls.PublicKey, error) {
	e, err := readEnvelope(path)
	if err != nil {
		return nil, err
	}
	raw, err := e.payload(bls.PublicKeySize, blsVerificationKeyType)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	key, err := bls.PublicKeyFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrMalformed, err)
	}
	return key, nil
}
