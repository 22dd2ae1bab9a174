package keys

import (
	"bytes"
	"fmt"
	"io"

	"github.com/leiosnode/leiosnode/vrf"
)

// Envelope types of VRF keys, as cardano-cli writes them.
const (
	vrfSigningKeyType      = "VrfSigningKey_PraosVRF"
	vrfVerificationKeyType = "VrfVerificationKey_PraosVRF"
)

// GenerateVRFKey draws a VRF key from random (crypto/rand when nil).
func GenerateVRFKey(random io.Reader) (*vrf.SecretKey, error) {
	return vrf.GenerateKey(random)
}

// WriteVRFSigningKey writes seed ‖ public key as a VRF signing key file (0600).
func WriteVRFSigningKey(path string, key *vrf.SecretKey) error {
	b := key.Bytes()
	return writeEnvelope(path, newEnvelope(vrfSigningKeyType, "VRF Signing Key", b[:]))
}

// ReadVRFSigningKey reads a VRF signing key file and checks that its public
// half is the one its seed derives.
func ReadVRFSigningKey(path string) (*vrf.SecretKey, error) {
	e, err := readEnvelope(path)
	if err != nil {
		return nil, err
	}
	raw, err := e.payload(vrf.SecretKeySize, vrfSigningKeyType)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	key, err := vrf.NewKeyFromSeed(raw[:vrf.SeedSize])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if pk := key.Public(); !bytes.Equal(pk[:], raw[vrf.SeedSize:]) {
		return nil, fmt.Errorf("%s: %w", path, ErrKeyMismatch)
	}
	return key, nil
}

// WriteVRFVerificationKey writes a VRF verification key file (0644).
func WriteVRFVerificationKey(path string, key vrf.PublicKey) error {
	return writeEnvelope(path, newEnvelope(vrfVerificationKeyType, "VRF Verification Key", key[:]))
}

// ReadVRFVerificationKey reads a VRF verification key file.
func ReadVRFVerificationKey(path string) (vrf.PublicKey, error) {
	e, err := readEnvelope(path)
	if err != nil {
		return vrf.PublicKey{}, err
	}
	raw, err := e.payload(vrf.PublicKeySize, vrfVerificationKeyType)
	if err != nil {
		return vrf.PublicKey{}, fmt.Errorf("%s: %w", path, err)
	}
	return vrf.PublicKey(raw), nil
}
