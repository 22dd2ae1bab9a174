package chainsync

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// ServiceOptions configure a Service. Chain is required; the rest are the
// per-peer Client's fields of the same names.
type ServiceOptions struct {
	// Chain is served to peers and synced from them.
	Chain          NodeChain
	ValidateHeader func(*block.Header) error
	OnValidHeader  func(*block.Header)
	IsInvalidBlock func(error) bool
	OnCaughtUp     func()
	BatchSize      int
	IsForkTooDeep  func(error) bool
	ForkRecheck    time.Duration
	// Logger receives the warnings of deep forks. Default slog.Default().
	Logger *slog.Logger
	// KeepAlive is the server's (Server.KeepAlive).
	KeepAlive time.Duration
	// Timeouts override Spec's per-state timeouts, by state (for tests);
	// nil keeps Spec's.
	Timeouts protocol.Timeouts
	// Registerer, if set, takes the service's metrics (metrics.go).
	Registerer prometheus.Registerer
}

// Service is chain sync as the host runs it: the server of
// ServiceOptions.Chain on the streams peers open, and toward every
// connected peer a Client that syncs ServiceOptions.Chain from it, fetching
// the bodies by block fetch from the same peer. It serves no block fetch
// itself: peers syncing from this node need blockfetch's Service beside it. It tells, through Forks, whether its
// peers' chains join ours.
type Service struct {
	opts      ServiceOptions
	spec      *protocol.Spec
	fetchSpec *protocol.Spec
	server    *Server
	forks     *forkWatch
}

var _ network.Service = (*Service)(nil)

// NewService returns the chain-sync service of opts.Chain.
func NewService(opts ServiceOptions) (*Service, error) {
	if opts.Chain == nil {
		return nil, errors.New("chainsync: ServiceOptions.Chain is required")
	}
	svc := &Service{
		opts:      opts,
		spec:      Spec().WithTimeouts(opts.Timeouts),
		fetchSpec: blockfetch.Spec(),
		server:    &Server{Chain: opts.Chain, KeepAlive: opts.KeepAlive},
		forks:     newForkWatch(cmp.Or(opts.Logger, slog.Default())),
	}
	if opts.Registerer != nil {
		if err := svc.registerMetrics(opts.Registerer); err != nil {
			return nil, err
		}
	}
	return svc, nil
}

// Forks is what the clients know of the connected peers' chains: which
// fork from ours deeper than k, and whether all do.
func (svc *Service) Forks() ForkStatus { return svc.forks.status() }

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "chainsync" }

// Servers is the chain-sync server.
func (svc *Service) Servers() []network.Server {
	return []network.Server{{Spec: svc.spec, Serve: svc.server.Serve}}
}

// RunClient syncs from p: headers over the chain-sync stream it opens,
// their bodies over a block-fetch stream per range.
func (svc *Service) RunClient(ctx context.Context, p *network.Peer) error {
	headers, err := p.Open(ctx, svc.spec)
	if err != nil {
		return err
	}
	bodies := func(ctx context.Context) (*protocol.Session, error) { return p.Open(ctx, svc.fetchSpec) }
	client := Client{
		Chain:          svc.opts.Chain,
		ValidateHeader: svc.opts.ValidateHeader,
		OnValidHeader:  svc.opts.OnValidHeader,
		Fetch: func(ctx context.Context, from, to block.Point) ([]*block.Block, error) {
			return blockfetch.FetchRange(ctx, bodies, from, to)
		},
		IsInvalidBlock: svc.opts.IsInvalidBlock,
		BatchSize:      svc.opts.BatchSize,
		OnCaughtUp:     svc.opts.OnCaughtUp,
		IsForkTooDeep:  svc.opts.IsForkTooDeep,
		OnFork:         func(fork *DeepFork) { svc.forks.report(p.ID, fork) },
		ForkRecheck:    svc.opts.ForkRecheck,
	}
	defer svc.forks.gone(p.ID)
	return client.Run(ctx, headers)
}
