package notify

import (
	"context"
	"errors"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is LeiosNotify as the host runs it: the relay serves every peer
// that opens /leios/notify/1, and a client follows each connected peer.
type Service struct {
	relay *Relay
	spec  *protocol.Spec
}

var _ network.Service = (*Service)(nil)

// ServiceOptions configure a Service. Relay is required.
type ServiceOptions struct {
	// Relay serves and follows the peers.
	Relay *Relay
	// Timeouts override Spec's per-state timeouts, by state (for tests);
	// nil keeps Spec's.
	Timeouts protocol.Timeouts
}

// NewService runs LeiosNotify through opts.Relay.
func NewService(opts ServiceOptions) (*Service, error) {
	if opts.Relay == nil {
		return nil, errors.New("notify: ServiceOptions.Relay is required")
	}
	return &Service{relay: opts.Relay, spec: Spec().WithTimeouts(opts.Timeouts)}, nil
}

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "notify" }

// Servers is the relay's server (Relay.Serve).
func (svc *Service) Servers() []network.Server {
	return []network.Server{{Spec: svc.spec, Serve: svc.relay.Serve}}
}

// RunClient follows p (Relay.Follow).
func (svc *Service) RunClient(ctx context.Context, p *network.Peer) error {
	s, err := p.Open(ctx, svc.spec)
	if err != nil {
		return err
	}
	return svc.relay.Follow(ctx, p.ID, s)
}
