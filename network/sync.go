package network

import (
	"context"

	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/chainsync"
)

// chainService serves opts.Chain by chain sync and block fetch, and syncs it
// from every peer: chain sync for headers, block fetch for their blocks,
// from the same peer.
func (h *Host) chainService() Service {
	chain := h.opts.Chain
	csSpec, bfSpec := chainsync.Spec(), blockfetch.Spec()
	csServer := &chainsync.Server{Chain: chain}
	bfServer := &blockfetch.Server{BlockRange: chain.BlockRange}
	return Service{
		Name: "chain",
		Servers: []Server{
			{Spec: csSpec, Serve: csServer.Serve},
			{Spec: bfSpec, Serve: bfServer.Serve},
		},
		Client: func(ctx context.Context, p *Peer) error {
			cs, err := p.Open(ctx, csSpec)
			if err != nil {
				return err
			}
			bf, err := p.Open(ctx, bfSpec)
			if err != nil {
				return err
			}
			client := chainsync.Client{
				Chain:          chain,
				ValidateHeader: h.opts.ValidateHeader,
				Fetch:          blockfetch.NewClient(bf, 0).Fetch,
				IsInvalidBlock: h.opts.IsInvalidBlock,
				BatchSize:      h.opts.SyncBatch,
				OnCaughtUp:     h.opts.OnCaughtUp,
			}
			return client.Run(ctx, cs)
		},
	}
}
