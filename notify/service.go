package notify

import (
	"context"

	"github.com/leiosnode/leiosnode/network"
)

// NewService is LeiosNotify as a network service: the relay serves every
// peer that opens /leios/notify/1, and a client follows each connected
// peer. The node runs relay.Run beside the host.
func NewService(relay *Relay) network.Service {
	spec := Spec()
	return network.Service{
		Name:    "notify",
		Servers: []network.Server{{Spec: spec, Serve: relay.Serve}},
		Client: func(ctx context.Context, p *network.Peer) error {
			s, err := p.Open(ctx, spec)
			if err != nil {
				return err
			}
			return relay.Follow(ctx, p.ID, s)
		},
	}
}
