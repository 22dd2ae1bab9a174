package txsubmission

import (
	"context"
	"errors"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is tx submission as the host runs it, both ways: toward each
// connected peer it opens a stream whose Client serves the mempool's txs,
// and on the streams peers open its Server pulls their txs into the
// mempool.
type Service struct {
	spec   *protocol.Spec
	server *Server
	client *Client
}

var _ network.Service = (*Service)(nil)

// ServiceOptions configure a Service. Mempool is required.
type ServiceOptions struct {
	// Mempool is what the client serves and the server fills.
	Mempool Mempool
	// Options configure the Client and the Server.
	Options
	// Timeouts override Spec's per-state timeouts, by state (for tests);
	// nil keeps Spec's.
	Timeouts protocol.Timeouts
}

// NewService runs tx submission over opts.Mempool.
func NewService(opts ServiceOptions) (*Service, error) {
	if opts.Mempool == nil {
		return nil, errors.New("txsubmission: ServiceOptions.Mempool is required")
	}
	return &Service{
		spec:   Spec().WithTimeouts(opts.Timeouts),
		server: NewServer(opts.Mempool, opts.Options),
		client: NewClient(opts.Mempool, opts.Options),
	}, nil
}

// Name is the service's name in the host's logs.
func (*Service) Name() string { return "txsubmission" }

// Servers is the tx-submission server.
func (svc *Service) Servers() []network.Server {
	return []network.Server{{Spec: svc.spec, Serve: svc.server.Serve}}
}

// RunClient serves the mempool's txs to p.
func (svc *Service) RunClient(ctx context.Context, p *network.Peer) error {
	s, err := p.Open(ctx, svc.spec)
	if err != nil {
		return err
	}
	return svc.client.Run(ctx, s)
}
