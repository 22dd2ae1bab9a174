package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"os"

	p2pcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/vrf"
)

// writeKeyPair generates an ed25519 key of the role and writes its signing
// key file and, when vkeyPath is not empty, its verification key file.
func writeKeyPair(skeyPath, vkeyPath string, role keys.Role) (ed25519.PublicKey, error) {
	key, err := keys.GenerateSigningKey(nil)
	if err != nil {
		return nil, err
	}
	if err := keys.WriteSigningKey(skeyPath, role, key); err != nil {
		return nil, err
	}
	vkey := key.Public().(ed25519.PublicKey)
	if vkeyPath != "" {
		if err := keys.WriteVerificationKey(vkeyPath, role, vkey); err != nil {
			return nil, err
		}
	}
	return vkey, nil
}

// writeNodeKey generates the key that gives a node its libp2p peer ID.
func writeNodeKey(path string) (ed25519.PublicKey, error) {
	return writeKeyPair(path, "", keys.Node)
}

// writeIssuerKey generates a pool's cold key, which signs its block headers.
func writeIssuerKey(skeyPath, vkeyPath string) (ed25519.PublicKey, error) {
	return writeKeyPair(skeyPath, vkeyPath, keys.StakePool)
}

// writeVRFKey generates a pool's VRF key.
func writeVRFKey(skeyPath, vkeyPath string) (vrf.PublicKey, error) {
	key, err := keys.GenerateVRFKey(nil)
	if err != nil {
		return vrf.PublicKey{}, err
	}
	if err := keys.WriteVRFSigningKey(skeyPath, key); err != nil {
		return vrf.PublicKey{}, err
	}
	if err := keys.WriteVRFVerificationKey(vkeyPath, key.Public()); err != nil {
		return vrf.PublicKey{}, err
	}
	return key.Public(), nil
}

// writePaymentKey generates a payment key as PREFIX.skey and PREFIX.vkey,
// writes its enterprise address in hex (as genesis initialFunds spell it) to
// PREFIX.addr, and returns the address.
func writePaymentKey(prefix string, networkID byte) ([]byte, error) {
	vkey, err := writeKeyPair(prefix+".skey", prefix+".vkey", keys.Payment)
	if err != nil {
		return nil, err
	}
	addr, err := keys.EnterpriseAddress(vkey, networkID)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(prefix+".addr", []byte(hex.EncodeToString(addr)+"\n"), 0o644); err != nil {
		return nil, err
	}
	return addr, nil
}

// peerIDOf is the libp2p peer ID of a node key: the network package builds
// its host from the same key, so the IDs in topology files match.
func peerIDOf(nodeKey ed25519.PublicKey) (peer.ID, error) {
	pub, err := p2pcrypto.UnmarshalEd25519PublicKey(nodeKey)
	if err != nil {
		return "", fmt.Errorf("node key: %w", err)
	}
	return peer.IDFromPublicKey(pub)
}
