package network

import (
	"context"

	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// TxSubmissionService runs tx submission with every peer, both ways: toward
// each connected peer it opens a stream whose client serves mempool's txs,
// and on the streams peers open it serves a server that pulls their txs
// into mempool. Pass it in HostOptions.Services.
//
// It lives here rather than in txsubmission, as the chain service does, so
// that protocol packages never import the host.
func TxSubmissionService(mempool txsubmission.Mempool, opts txsubmission.Options) Service {
	spec := txsubmission.Spec()
	server := txsubmission.NewServer(mempool, opts)
	client := txsubmission.NewClient(mempool, opts)
	return Service{
		Name:    "txsubmission",
		Servers: []Server{{Spec: spec, Serve: server.Serve}},
		Client: func(ctx context.Context, p *Peer) error {
			s, err := p.Open(ctx, spec)
			if err != nil {
				return err
			}
			return client.Run(ctx, s)
		},
	}
}
