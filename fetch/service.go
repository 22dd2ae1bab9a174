package fetch

import (
	"context"
	"errors"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is LeiosFetch as the host runs it: the server on every stream
// peers open, and toward every connected peer a client that carries out
// the requests the decision logic assigns to that peer.
type Service struct {
	f    *Fetcher
	spec *protocol.Spec
}

var _ network.Service = (*Service)(nil)

// ServiceOptions configure a Service. Fetcher is required.
type ServiceOptions struct {
	// Fetcher serves the peers and carries out its decisions' requests.
	Fetcher *Fetcher
	// Timeouts override Spec's per-state timeouts, by state (for tests);
	// nil keeps Spec's.
	Timeouts protocol.Timeouts
}

// NewService runs LeiosFetch through opts.Fetcher, with the Spec of its
// Limits.
func NewService(opts ServiceOptions) (*Service, error) {
	if opts.Fetcher == nil {
		return nil, errors.New("fetch: ServiceOptions.Fetcher is required")
	}
	return &Service{f: opts.Fetcher, spec: Spec(opts.Fetcher.opts.Limits).WithTimeouts(opts.Timeouts)}, nil
}

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "leiosfetch" }

// Servers is the fetch server.
func (svc *Service) Servers() []network.Server {
	return []network.Server{{Spec: svc.spec, Serve: svc.f.server.Serve}}
}

// RunClient carries out the requests assigned to p (Fetcher.RunPeer).
func (svc *Service) RunClient(ctx context.Context, p *network.Peer) error {
	return svc.f.RunPeer(ctx, p.ID, func(ctx context.Context) (*protocol.Session, error) {
		return p.Open(ctx, svc.spec)
	})
}
