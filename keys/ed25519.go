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
	// Payment keys own funds: PaymentSigningKeyShelley_ed25519 /
	// PaymentVerificationKeyShelley_ed25519, as cardano-cli's address
	// key-gen and cardano-serialization-lib write them.
	Payment Role = iota + 1
	// StakePool keys are a pool's cold keys, which sign the block headers
	// it issues: StakePoolSigningKey_ed25519 / StakePoolVerificationKey_ed25519,
	// as cardano-cli's node key-gen writes them.
	StakePool
	// Node keys give a node its libp2p peer ID. Cardano has no such file;
	// the types are this project's: LeiosNodeSigningKey_ed25519 /
	// LeiosNodeVerificationKey_ed25519.
	Node
)

// envelopeKind is how a key file of one role and half is labelled: the type
// and description cardano-cli writes, and the type this node wrote before
// it adopted cardano-cli's, which it still reads (never writes).
type envelopeKind struct {
	typ, description string
	legacy           string
}

// types lists the envelope types read as this kind, the written one first.
func (k envelopeKind) types() []string {
	if k.legacy == "" {
		return []string{k.typ}
	}
	return []string{k.typ, k.legacy}
}

// envelopeKind returns the kind of the role's signing (secret) or
// verification key file.
func (r Role) envelopeKind(secret bool) (envelopeKind, error) {
	switch {
	case r == Payment && secret:
		return envelopeKind{"PaymentSigningKeyShelley_ed25519", "Payment Signing Key", "PaymentSigningKey_ed25519"}, nil
	case r == Payment:
		return envelopeKind{"PaymentVerificationKeyShelley_ed25519", "Payment Verification Key", "PaymentVerificationKey_ed25519"}, nil
	case r == StakePool && secret:
		return envelopeKind{"StakePoolSigningKey_ed25519", "Stake Pool Operator Signing Key", ""}, nil
	case r == StakePool:
		return envelopeKind{"StakePoolVerificationKey_ed25519", "Stake Pool Operator Verification Key", ""}, nil
	case r == Node && secret:
		return envelopeKind{"LeiosNodeSigningKey_ed25519", "Leios Node Network Signing Key", ""}, nil
	case r == Node:
		return envelopeKind{"LeiosNodeVerificationKey_ed25519", "Leios Node Network Verification Key", ""}, nil
	}
	return envelopeKind{}, fmt.Errorf("keys: unknown role %d", r)
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
	kind, err := role.envelopeKind(true)
	if err != nil {
		return err
	}
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("%w: ed25519 private key is %d bytes", ErrWrongLength, len(key))
	}
	return writeEnvelope(path, newEnvelope(kind.typ, kind.description, key.Seed()))
}

// ReadSigningKey reads the role's signing key file.
func ReadSigningKey(path string, role Role) (ed25519.PrivateKey, error) {
	kind, err := role.envelopeKind(true)
	if err != nil {
		return nil, err
	}
	e, err := readEnvelope(path)
	if err != nil {
		return nil, err
	}
	seed, err := e.payload(ed25519.SeedSize, kind.types()...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// WriteVerificationKey writes the role's verification key file (0644).
func WriteVerificationKey(path string, role Role, key ed25519.PublicKey) error {
	kind, err := role.envelopeKind(false)
	if err != nil {
		return err
	}
	if len(key) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: ed25519 public key is %d bytes", ErrWrongLength, len(key))
	}
	return writeEnvelope(path, newEnvelope(kind.typ, kind.description, key))
}

// ReadVerificationKey reads the role's verification key file.
func ReadVerificationKey(path string, role Role) (ed25519.PublicKey, error) {
	kind, err := role.envelopeKind(false)
	if err != nil {
		return nil, err
	}
	e, err := readEnvelope(path)
	if err != nil {
		return nil, err
	}
	key, err := e.payload(ed25519.PublicKeySize, kind.types()...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ed25519.PublicKey(key), nil
}
