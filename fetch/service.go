package fetch

import (
	"context"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is LeiosFetch as the host runs it: the server on every stream
// peers open, and toward every connected peer a client that carries out
// the requests the decision logic assigns to that peer.
type Service struct{ f *Fetcher }

var _ network.Service = (*Service)(nil)

// Service is f's service, for the host.
func (f *Fetcher) Service() *Service { return &Service{f} }

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "leiosfetch" }

// Servers is the fetch server.
func (svc *Service) Servers() []network.Server {
	return []network.Server{{Spec: svc.f.spec, Serve: svc.f.server.Serve}}
}

// RunClient carries out the requests assigned to p (Fetcher.RunPeer).
func (svc *Service) RunClient(ctx context.Context, p *network.Peer) error {
	return svc.f.RunPeer(ctx, p.ID, func(ctx context.Context) (*protocol.Session, error) {
		return p.Open(ctx, svc.f.spec)
	})
}
