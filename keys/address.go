package keys

import (
	"crypto/ed25519"
	"fmt"

	"golang.org/x/crypto/blake2b"
)

// KeyHashSize is the size of a key hash (Blake2b-224).
const KeyHashSize = 28

// PaymentKeyHash is the Blake2b-224 hash of a verification key: what an
// address names and what a witness's key must hash to (ARCHITECTURE.md, "Wire formats").
func PaymentKeyHash(vkey ed25519.PublicKey) [KeyHashSize]byte {
	h, err := blake2b.New(KeyHashSize, nil)
	if err != nil {
		panic(err) // unreachable: 28 is a valid size and there is no key
	}
	h.Write(vkey)
	var out [KeyHashSize]byte
	h.Sum(out[:0])
	return out
}

// EnterpriseAddress is the Shelley enterprise address (CIP-19 type 6: no
// stake part) of a payment key: the header byte 0x60 | network id, then the
// key hash. Network ids are 4 bits; devnets use 0.
func EnterpriseAddress(vkey ed25519.PublicKey, networkID byte) ([]byte, error) {
	if networkID > 0x0f {
		return nil, fmt.Errorf("keys: network id %d does not fit in 4 bits", networkID)
	}
	hash := PaymentKeyHash(vkey)
	return append([]byte{0x60 | networkID}, hash[:]...), nil
}
