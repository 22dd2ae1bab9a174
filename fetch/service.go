package fetch

import (
	"context"
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/leios/protocolset"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is LeiosFetch as the host runs it: the server on every stream
// peers open, and toward every connected peer a client that carries out
// the requests the decision logic assigns to that peer, in /leios/fetch/2
// if the peer serves it (and the options allow), else /leios/fetch/1.
type Service struct {
	f     *Fetcher
	specs []*protocol.Spec // served and spoken, preferred first
}

var _ network.Service = (*Service)(nil)

// ServiceOptions configure a Service. Fetcher is required.
type ServiceOptions struct {
	// Fetcher serves the peers and carries out its decisions' requests.
	Fetcher *Fetcher
	// Timeouts override Spec's and Spec2's per-state timeouts, by state
	// (for tests); nil keeps theirs.
	Timeouts protocol.Timeouts
	// Protocols chooses the versions: /leios/fetch/2 with the CIP's set,
	// /leios/fetch/1 with the prototype's. Default both.
	Protocols protocolset.Set
}

// NewService runs LeiosFetch through opts.Fetcher, with the Spec of its
// Limits.
func NewService(opts ServiceOptions) (*Service, error) {
	if opts.Fetcher == nil {
		return nil, errors.New("fetch: ServiceOptions.Fetcher is required")
	}
	svc := &Service{f: opts.Fetcher}
	limits := opts.Fetcher.opts.Limits
	if opts.Protocols.CIP() {
		svc.specs = append(svc.specs, Spec2(limits).WithTimeouts(opts.Timeouts))
	}
	if opts.Protocols.Prototype() {
		svc.specs = append(svc.specs, Spec(limits).WithTimeouts(opts.Timeouts))
	}
	return svc, nil
}

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "leiosfetch" }

// Servers is the fetch server, on each version.
func (svc *Service) Servers() []network.Server {
	servers := make([]network.Server, len(svc.specs))
	for i, spec := range svc.specs {
		servers[i] = network.Server{Spec: spec, Serve: svc.f.server.Serve}
	}
	return servers
}

// RunClient carries out the requests assigned to p (Fetcher.RunPeer), in
// the first version p serves; none is ErrNoClient for this peer.
func (svc *Service) RunClient(ctx context.Context, p *network.Peer) error {
	spec, err := p.Speaks(ctx, svc.specs...)
	if errors.Is(err, network.ErrNoCommonProtocol) {
		return fmt.Errorf("%w: %w", network.ErrNoClient, err)
	} else if err != nil {
		return err
	}
	return svc.f.runPeer(ctx, p.ID, spec.Version >= 2, func(ctx context.Context) (*protocol.Session, error) {
		return p.Open(ctx, spec)
	})
}
