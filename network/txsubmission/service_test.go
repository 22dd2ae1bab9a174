package txsubmission_test

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

func TestNewService(t *testing.T) {
	mempool := newMempool(newWallet(1).genesis())
	protocoltest.CheckNewService(t, []protocoltest.ServiceCase[txsubmission.ServiceOptions]{
		{Name: "no mempool", Opts: txsubmission.ServiceOptions{Options: txsubmission.Options{MaxTxsPerRequest: 10}}, WantErr: "ServiceOptions.Mempool is required"},
		{Name: "mempool", Opts: txsubmission.ServiceOptions{Mempool: mempool}},
		{Name: "mempool and a timeout", Opts: txsubmission.ServiceOptions{Mempool: mempool, Timeouts: protocol.Timeouts{txsubmission.StTxs: time.Second}}},
	}, txsubmission.NewService,
		func(svc *txsubmission.Service) *protocol.Spec { return svc.Servers()[0].Spec },
		func(o txsubmission.ServiceOptions) *protocol.Spec {
			return txsubmission.Spec().WithTimeouts(o.Timeouts)
		})
}
