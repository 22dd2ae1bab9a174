package keys

import (
	"crypto/ed25519"
	"fmt"
	"os"

	"github.com/leiosnode/leiosnode/ledger"
)

// KeyHashSize is the size of a key hash (Blake2b-224).
const KeyHashSize = 28

// PaymentKeyHash is the Blake2b-224 hash of a verification key: what an
// address names and what a witness's key must hash to (docs/protocol.md, "Wire formats").
func PaymentKeyHash(vkey ed25519.PublicKey) [KeyHashSize]byte { return ledger.KeyHash(vkey) }

// EnterpriseAddress is the Shelley enterprise address (CIP-19 type 6: no
// stake part) of a payment key: the header byte 0x60 | network id, then the
// key hash. Network ids are 4 bits; devnets use 0.
func EnterpriseAddress(vkey ed25519.PublicKey, networkID byte) ([]byte, error) {
	if networkID > 0x0f {
		return nil, fmt.Errorf("keys: network id %d does not fit in 4 bits", networkID)
	}
	return ledger.EnterpriseAddress(networkID, ledger.KeyHash(vkey)), nil
}

// WriteAddressFile writes an address file as cardano-cli does: the address
// in bech32 (ledger.FormatAddress) and no newline — tools such as
// cardano-serialization-lib's Address.from_bech32 refuse one.
func WriteAddressFile(path string, addr []byte) error {
	return os.WriteFile(path, []byte(ledger.FormatAddress(addr)), 0o644)
}

// ReadAddressFile reads an address file: one address, in bech32 as
// cardano-cli and this node write it, or in hex as earlier versions of
// this node did (ledger.ParseAddress).
func ReadAddressFile(path string) ([]byte, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	addr, err := ledger.ParseAddress(string(text))
	if err != nil {
		return nil, fmt.Errorf("keys: %s: %w", path, err)
	}
	return addr, nil
}
