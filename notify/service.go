package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/leios/protocolset"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is LeiosNotify as the host runs it: the relay serves every
// stream peers open — the prototype's /leios/notify/1 and the CIP's
// /leios/announce/1, /leios/votes/1 and /leios/blocknotify/1, as
// ServiceOptions.Protocols chooses — and a client follows each connected
// peer, over the CIP's streams if the peer serves them, else the
// prototype's.
type Service struct {
	relay *Relay
	// notify is the prototype's stream; announce, votes and blockNotify the
	// CIP's. A set the options leave out is nil.
	notify, announce, votes, blockNotify *protocol.Spec
}

var _ network.Service = (*Service)(nil)

// ServiceOptions configure a Service. Relay is required.
type ServiceOptions struct {
	// Relay serves and follows the peers.
	Relay *Relay
	// Timeouts override the specs' per-state timeouts, by state (for
	// tests); nil keeps theirs.
	Timeouts protocol.Timeouts
	// Protocols chooses the sets: the CIP's three streams, the prototype's
	// one, or both (the default).
	Protocols protocolset.Set
}

// NewService runs LeiosNotify through opts.Relay.
func NewService(opts ServiceOptions) (*Service, error) {
	if opts.Relay == nil {
		return nil, errors.New("notify: ServiceOptions.Relay is required")
	}
	svc := &Service{relay: opts.Relay}
	if opts.Protocols.CIP() {
		svc.announce = AnnounceSpec().WithTimeouts(opts.Timeouts)
		svc.votes = VotesSpec().WithTimeouts(opts.Timeouts)
		svc.blockNotify = BlockNotifySpec().WithTimeouts(opts.Timeouts)
	}
	if opts.Protocols.Prototype() {
		svc.notify = Spec().WithTimeouts(opts.Timeouts)
	}
	return svc, nil
}

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "notify" }

// Servers are the relay's servers, a stream kind each.
func (svc *Service) Servers() []network.Server {
	var servers []network.Server
	if svc.announce != nil {
		serve := func(kind streamKind) func(context.Context, *protocol.Session) error {
			return func(ctx context.Context, s *protocol.Session) error { return svc.relay.serveTokens(ctx, s, kind) }
		}
		servers = append(servers,
			network.Server{Spec: svc.announce, Serve: serve(announcementsOnly)},
			network.Server{Spec: svc.votes, Serve: serve(votesOnly)},
			network.Server{Spec: svc.blockNotify, Serve: serve(offersOnly)})
	}
	if svc.notify != nil {
		servers = append(servers, network.Server{Spec: svc.notify, Serve: svc.relay.Serve})
	}
	return servers
}

// RunClient follows p: over the CIP's streams if p serves LeiosAnnounce
// (Relay.FollowCIP), else over the prototype's (Relay.Follow); neither is
// ErrNoClient for this peer.
func (svc *Service) RunClient(ctx context.Context, p *network.Peer) error {
	var specs []*protocol.Spec
	for _, spec := range []*protocol.Spec{svc.announce, svc.notify} {
		if spec != nil {
			specs = append(specs, spec)
		}
	}
	spec, err := p.Speaks(ctx, specs...)
	if errors.Is(err, network.ErrNoCommonProtocol) {
		return fmt.Errorf("%w: %w", network.ErrNoClient, err)
	} else if err != nil {
		return err
	}
	if spec == svc.announce {
		cip := map[string]*protocol.Spec{svc.announce.Name: svc.announce, svc.votes.Name: svc.votes, svc.blockNotify.Name: svc.blockNotify}
		return svc.relay.FollowCIP(ctx, Peer{ID: p.ID, Waste: p.Waste}, func(ctx context.Context, spec *protocol.Spec) (*protocol.Session, error) {
			return p.Open(ctx, cip[spec.Name]) // with this service's timeouts
		})
	}
	s, err := p.Open(ctx, spec)
	if err != nil {
		return err
	}
	return svc.relay.Follow(ctx, Peer{ID: p.ID, Waste: p.Waste}, s)
}
