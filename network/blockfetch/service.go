package blockfetch

import (
	"context"
	"errors"

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

// ServiceOptions configure a Service. Blocks is required.
type ServiceOptions struct {
	// Blocks reads the ranges the server serves (Server.Blocks).
	Blocks Blocks
	// Timeouts override Spec's per-state timeouts, by state (for tests);
	// nil keeps Spec's.
	Timeouts protocol.Timeouts
}

// NewService serves the ranges opts.Blocks reads.
func NewService(opts ServiceOptions) (*Service, error) {
	if opts.Blocks == nil {
		return nil, errors.New("blockfetch: ServiceOptions.Blocks is required")
	}
	return &Service{spec: Spec().WithTimeouts(opts.Timeouts), server: &Server{Blocks: opts.Blocks}}, nil
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
