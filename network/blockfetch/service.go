package blockfetch

import (
	"context"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is block fetch as the host runs it: the server of a chain's block
// ranges on the streams peers open. It has no client of its own: chain
// sync's client fetches bodies by block fetch from the peer whose headers
// it follows (chainsync.Service), so that bodies always come from the peer
// that announced them.
type Service struct {
	spec   *protocol.Spec
	server *Server
}

var _ network.Service = (*Service)(nil)

// NewService serves the ranges blocks reads.
func NewService(blocks Blocks) *Service {
	return &Service{spec: Spec(), server: &Server{Blocks: blocks}}
}

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "blockfetch" }

// Servers is the block-fetch server.
func (svc *Service) Servers() []network.Server {
	return []network.Server{{Spec: svc.spec, Serve: svc.server.Serve}}
}

// RunClient returns network.ErrNoClient: block fetch's client runs inside
// chain sync's.
func (*Service) RunClient(context.Context, *network.Peer) error { return network.ErrNoClient }
