package chainsync_test

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

func TestNewService(t *testing.T) {
	chain := chaintest.New(3)
	protocoltest.CheckNewService(t, []protocoltest.ServiceCase[chainsync.ServiceOptions]{
		{Name: "no chain", Opts: chainsync.ServiceOptions{ValidateHeader: chaintest.ValidateHeader}, WantErr: "ServiceOptions.Chain is required"},
		{Name: "chain", Opts: chainsync.ServiceOptions{Chain: chain}},
		{Name: "chain and a timeout", Opts: chainsync.ServiceOptions{Chain: chain, Timeouts: protocol.Timeouts{chainsync.StIdle: time.Second}}},
	}, chainsync.NewService,
		func(svc *chainsync.Service) *protocol.Spec { return svc.Servers()[0].Spec },
		func(o chainsync.ServiceOptions) *protocol.Spec { return chainsync.Spec().WithTimeouts(o.Timeouts) })
}
