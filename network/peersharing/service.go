package peersharing

import (
	"context"
	"errors"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is peer sharing as the host runs it (HostOptions.PeerSharing):
// the server answers with the peers the host shares with the asking peer,
// and the host's connection manager asks through RequestPeers. It has no
// client of its own toward every peer.
type Service struct {
	spec *protocol.Spec
}

var _ network.PeerSharing = (*Service)(nil)

// ServiceOptions configure a Service. Nothing is required: the peers it
// shares are the host's (network.Peer.PeersToShare).
type ServiceOptions struct {
	// Timeouts override Spec's per-state timeouts, by state (for tests);
	// nil keeps Spec's.
	Timeouts protocol.Timeouts
}

// NewService returns the peer-sharing service. It never fails, as nothing
// is required; the error keeps the shape of every mini-protocol's
// NewService.
func NewService(opts ServiceOptions) (*Service, error) {
	return &Service{spec: Spec().WithTimeouts(opts.Timeouts)}, nil
}

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "peersharing" }

// Servers is the peer-sharing server, sharing what the host shares with
// the peer that asks (network.Peer.PeersToShare).
func (svc *Service) Servers() []network.Server {
	return []network.Server{{Spec: svc.spec, Serve: serve}}
}

func serve(ctx context.Context, s *protocol.Session) error {
	p := network.RemotePeer(ctx)
	if p == nil {
		return errors.New("peersharing: served outside a host")
	}
	return (&Server{Share: p.PeersToShare}).Serve(ctx, s)
}

// RunClient returns network.ErrNoClient: the host's connection manager
// asks through RequestPeers when it needs peers.
func (*Service) RunClient(context.Context, *network.Peer) error { return network.ErrNoClient }

// RequestPeers asks p for up to amount peers over a session of its own.
func (svc *Service) RequestPeers(ctx context.Context, p *network.Peer, amount int) ([]peer.AddrInfo, error) {
	s, err := p.Open(ctx, svc.spec)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return Request(ctx, s, amount)
}
