// Package peerid derives a node's libp2p peer ID from its node key. It
// stands apart from keys so that the tools that read key files (the load
// tool, the API's clients) link nothing of libp2p.
package peerid

import (
	"crypto/ed25519"
	"fmt"

	p2pcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Of is the libp2p peer ID of a node key: the network package builds its
// host from the same key, so the IDs in topology files match.
func Of(nodeKey ed25519.PublicKey) (peer.ID, error) {
	pub, err := p2pcrypto.UnmarshalEd25519PublicKey(nodeKey)
	if err != nil {
		return "", fmt.Errorf("node key: %w", err)
	}
	return peer.IDFromPublicKey(pub)
}
