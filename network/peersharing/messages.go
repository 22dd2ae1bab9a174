package peersharing

import (
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags, as in Cardano's peer-sharing codec.
const (
	TagShareRequest uint64 = 0
	TagSharePeers   uint64 = 1
	TagDone         uint64 = 2
)

// Bounds of a reply. MaxAmount is the most peers a client asks for and a
// server shares at once (Cardano's server shares at most 10 a time; a
// client here asks for twice its missing peers, which stays below this).
const (
	MaxAmount       = 32
	MaxAddrsPerPeer = 8
	maxAddrLen      = 128 // a DNS name with a port fits; nothing sane is longer
)

// MsgShareRequest `[0, amount]` asks for up to Amount peers.
type MsgShareRequest struct {
	_      struct{} `cbor:",toarray"`
	Amount uint8
}

// MsgSharePeers `[1, [* peer_address]]` answers a request.
type MsgSharePeers struct {
	_     struct{} `cbor:",toarray"`
	Peers []PeerAddress
}

// MsgDone `[2]` ends the protocol.
type MsgDone struct {
	_ struct{} `cbor:",toarray"`
}

// PeerAddress `[peer_id, [+ multiaddr]]` is one shared peer: its peer ID
// and the addresses it may be dialed at, each a binary multiaddr without a
// /p2p part.
type PeerAddress struct {
	_     struct{} `cbor:",toarray"`
	ID    []byte
	Addrs [][]byte
}

func (*MsgShareRequest) Tag() uint64 { return TagShareRequest }
func (*MsgSharePeers) Tag() uint64   { return TagSharePeers }
func (*MsgDone) Tag() uint64         { return TagDone }

// Validate checks every shared peer (see PeerAddress.Validate) and the
// bound on their number.
func (m *MsgSharePeers) Validate() error {
	if len(m.Peers) > MaxAmount {
		return fmt.Errorf("%d peers shared, at most %d", len(m.Peers), MaxAmount)
	}
	for i := range m.Peers {
		if err := m.Peers[i].Validate(); err != nil {
			return fmt.Errorf("peer %d: %w", i, err)
		}
	}
	return nil
}

// Validate checks that the peer ID and every address parse, that there
// are 1 to MaxAddrsPerPeer addresses, and that none names a peer itself.
func (a *PeerAddress) Validate() error {
	if _, err := peer.IDFromBytes(a.ID); err != nil {
		return fmt.Errorf("peer ID: %w", err)
	}
	if len(a.Addrs) == 0 || len(a.Addrs) > MaxAddrsPerPeer {
		return fmt.Errorf("%d addresses, want 1 to %d", len(a.Addrs), MaxAddrsPerPeer)
	}
	for _, b := range a.Addrs {
		if len(b) > maxAddrLen {
			return fmt.Errorf("address of %d bytes, at most %d", len(b), maxAddrLen)
		}
		addr, err := ma.NewMultiaddrBytes(b)
		if err != nil {
			return fmt.Errorf("address: %w", err)
		}
		if _, err := addr.ValueForProtocol(ma.P_P2P); err == nil {
			return errors.New("address names a peer: the peer ID goes beside it")
		}
	}
	return nil
}

// AddrInfo is the shared peer as libp2p dials it. It must have been
// validated.
func (a *PeerAddress) AddrInfo() peer.AddrInfo {
	id, _ := peer.IDFromBytes(a.ID)
	info := peer.AddrInfo{ID: id}
	for _, b := range a.Addrs {
		if addr, err := ma.NewMultiaddrBytes(b); err == nil {
			info.Addrs = append(info.Addrs, addr)
		}
	}
	return info
}

// peerAddress is info as it is shared: its first MaxAddrsPerPeer addresses
// of at most maxAddrLen bytes; ok is false if none is left.
func peerAddress(info peer.AddrInfo) (a PeerAddress, ok bool) {
	a.ID = []byte(info.ID)
	for _, addr := range info.Addrs {
		if b := addr.Bytes(); len(b) <= maxAddrLen && len(a.Addrs) < MaxAddrsPerPeer {
			a.Addrs = append(a.Addrs, b)
		}
	}
	return a, len(a.Addrs) > 0
}

var _ protocol.Validator = (*MsgSharePeers)(nil)
