package keys

import (
	"crypto/ed25519"
	"fmt"

	p2pcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// PeerID is the libp2p peer ID of a node key: the network package builds
// its host from the same key, so the IDs in topology files match.
func PeerID(nodeKey ed25519.PublicKey) (peer.ID, error) {
	pub, err := p2pcrypto.UnmarshalEd25519PublicKey(nodeKey)
	if err != nil {
		return "", fmt.Errorf("node key: %w", err)
	}
	return peer.IDFromPublicKey(pub)
}
