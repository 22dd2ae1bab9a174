package peersharing

import (
	"context"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// Server answers peer-sharing requests.
type Server struct {
	// Share returns up to amount peers to share with the peer at the other
	// end of the session; the server sends at most amount of them, each
	// with at most MaxAddrsPerPeer addresses, and drops those left with
	// none.
	Share func(amount int) []peer.AddrInfo
}

// Serve answers one client until it says done or the session ends.
func (srv *Server) Serve(ctx context.Context, s *protocol.Session) error {
	for {
		msg, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *MsgShareRequest:
			err = s.Send(srv.reply(int(m.Amount)))
		case *MsgDone:
			return nil
		default:
			err = fmt.Errorf("peersharing: server got %T", msg) // the Spec rules it out
		}
		if err != nil {
			return err
		}
	}
}

// reply is the answer to a request for amount peers.
func (srv *Server) reply(amount int) *MsgSharePeers {
	amount = min(amount, MaxAmount)
	reply := &MsgSharePeers{Peers: []PeerAddress{}}
	if amount == 0 {
		return reply
	}
	for _, info := range srv.Share(amount) {
		if len(reply.Peers) == amount {
			break
		}
		if a, ok := peerAddress(info); ok {
			reply.Peers = append(reply.Peers, a)
		}
	}
	return reply
}
