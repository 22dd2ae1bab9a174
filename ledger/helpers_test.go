package ledger

import (
	"crypto/ed25519"
)

// testKey is a deterministic signing key.
func testKey(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	return ed25519.NewKeyFromSeed(s)
}

func signers(keys ...ed25519.PrivateKey) []ed25519.PrivateKey { return keys }

func signID(key ed25519.PrivateKey, id [32]byte) []byte { return ed25519.Sign(key, id[:]) }

// addrOf is the enterprise address (network 0) of key.
func addrOf(key ed25519.PrivateKey) []byte {
	return EnterpriseAddress(0, KeyHash(key.Public().(ed25519.PublicKey)))
}
