package notify

import (
	"context"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is LeiosNotify as the host runs it: the relay serves every peer
// that opens /leios/notify/1, and a client follows each connected peer.
// The node runs relay.Run beside the host.
type Service struct {
	relay *Relay
	spec  *protocol.Spec
}

var _ network.Service = (*Service)(nil)

// NewService runs LeiosNotify through relay.
func NewService(relay *Relay) *Service {
	return &Service{relay: relay, spec: Spec().WithTimeouts(relay.opts.Timeouts)}
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
