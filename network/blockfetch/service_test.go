package blockfetch_test

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

func TestNewService(t *testing.T) {
	blocks := blockfetch.FromSlices(chaintest.New(3).BlockRange)
	protocoltest.CheckNewService(t, []protocoltest.ServiceCase[blockfetch.ServiceOptions]{
		{Name: "no blocks", Opts: blockfetch.ServiceOptions{Timeouts: protocol.Timeouts{blockfetch.StIdle: time.Second}}, WantErr: "ServiceOptions.Blocks is required"},
		{Name: "blocks", Opts: blockfetch.ServiceOptions{Blocks: blocks}},
		{Name: "blocks and a timeout", Opts: blockfetch.ServiceOptions{Blocks: blocks, Timeouts: protocol.Timeouts{blockfetch.StBusy: time.Second}}},
	}, blockfetch.NewService,
		func(svc *blockfetch.Service) *protocol.Spec { return svc.Servers()[0].Spec },
		func(o blockfetch.ServiceOptions) *protocol.Spec { return blockfetch.Spec().WithTimeouts(o.Timeouts) })
}
