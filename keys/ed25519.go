package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
)

// Role is what an ed25519 key is for; it picks the envelope type, as
// cardano-cli does, so a key is never read in the wrong role.
type Role uint8

const (
	// Payment keys own funds: PaymentSigningKey_ed25519 /
	// PaymentVerificationKey_ed25519.
	Payment Role = iota + 1
	// StakePool keys are a pool's cold keys, which sign the block headers
	// it issues: StakePoolSigningKey_ed25519 / StakePoolVerificationKey_ed25519.
	StakePool
	// Node keys give a node its libp2p peer ID. Cardano has no such file;
	// the types are this project's: LeiosNodeSigningKey_ed25519 /
	// LeiosNodeVerificationKey_ed25519.
	Node
)

// envelopeType returns the type and description cardano-cli writes for the
// signing (secret) or verification key of the role.
func (r Role) envelopeType(secret bool) (typ, description string, err error) {
	switch {
	case r == Payment && secret:
		return "PaymentSigningKey_ed25519", "Payment Signing Key", nil
	case r == Payment:
		return "PaymentVerificationKey_ed25519", "Payment Verification Key", nil
	case r == StakePool && secret:
		return "StakePoolSigningKey_ed25519", "Stake Pool Operator Signing Key", nil
	case r == StakePool:
		return "StakePoolVerificationKey_ed25519", "Stake Pool Operator Verification Key", nil
	case r == Node && secret:
		return "LeiosNodeSigningKey_ed25519", "Leios Node Network Signing Key", nil
	case r == Node:
		return "LeiosNodeVerificationKey_ed25519", "Leios Node Network Verification Key", nil
	}
	return "", "", fmt.Errorf("keys: unknown role %d", r)
}

// GenerateSigningKey draws an ed25519 key from random (crypto/rand when nil).
func GenerateSigningKey(random io.Reader) (ed25519.PrivateKey, error) {
	if random == nil {
		random = rand.Reader
	}
	_, key, err := ed25519.GenerateKey(random)
	if err != nil {
		return nil, fmt.Errorf("keys: generating ed25519 key: %w", err)
	}
	return key, nil
}

// WriteSigningKey writes key's seed as the role's signing key file (0600).
func WriteSigningKey(path string, role Role, key ed25519.PrivateKey) error {
	typ, description, err := role.envelopeType(true)
	if err != nil {
		return err
	}
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("%w: ed25519 private key is %d bytes", ErrWrongLength, len(key))
	}
	return writeEnvelope(path, newEnvelope(typ, description, key.Seed()))
}

// ReadSigningKey reads the role's signing key file.
func ReadSigningKey(path string, role Role) (ed25519.PrivateKey, error) {
	typ, _, err := role.envelopeType(true)
	if err != nil {
		return nil, err
	}
	e, err := readEnvelope(path)
	if err != nil {
		return nil, err
	}
	seed, err := e.payload(typ, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// WriteVerificationKey writes the role's verification key file (0644).
func WriteVerificationKey(path string, role Role, key ed25519.PublicKey) error {
	typ, description, err := role.envelopeType(false)
	if err != nil {
		return err
	}
	if len(key) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: ed25519 public key is %d bytes", ErrWrongLength, len(key))
	}
	return writeEnvelope(path, newEnvelope(typ, description, key))
}

// ReadVerificationKey reads the role's verification key file.
func ReadVerificationKey(path string, role Role) (ed25519.PublicKey, error) {
	typ, _, err := role.envelopeType(false)
	if err != nil {
		return nil, err
	}
	e, err := readEnvelope(path)
	if err != nil {
		return nil, err
	}
	key, err := e.payload(typ, ed25519.PublicKeySize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ed25519.PublicKey(key), nil
}
