package peersharing

import (
	"context"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// ErrTooManyPeers is the violation of a server that shares more peers than
// it was asked for.
var ErrTooManyPeers = protocol.NewViolation("peersharing: server shared more peers than asked for")

// Request asks the server at the other end of s for up to amount peers
// (clamped to 0..MaxAmount), then says done. The caller closes s.
func Request(ctx context.Context, s *protocol.Session, amount int) ([]peer.AddrInfo, error) {
	amount = min(max(amount, 0), MaxAmount)
	if err := s.Send(&MsgShareRequest{Amount: uint8(amount)}); err != nil {
		return nil, err
	}
	msg, err := s.Recv(ctx)
	if err != nil {
		return nil, err
	}
	reply, ok := msg.(*MsgSharePeers)
	if !ok {
		return nil, fmt.Errorf("peersharing: client got %T", msg) // the Spec rules it out
	}
	if len(reply.Peers) > amount {
		return nil, s.Fail(fmt.Errorf("%w: %d, asked for %d", ErrTooManyPeers, len(reply.Peers), amount))
	}
	peers := make([]peer.AddrInfo, len(reply.Peers))
	for i := range reply.Peers {
		peers[i] = reply.Peers[i].AddrInfo()
	}
	_ = s.Send(&MsgDone{}) // the answer is in: a failed goodbye loses nothing
	return peers, nil
}
