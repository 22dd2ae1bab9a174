package notify_test

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/notify"
)

func TestNewService(t *testing.T) {
	relay := newTestNet(t, 1).relay(t)
	protocoltest.CheckNewService(t, []protocoltest.ServiceCase[notify.ServiceOptions]{
		{Name: "no relay", Opts: notify.ServiceOptions{Timeouts: protocol.Timeouts{notify.StBusy: time.Second}}, WantErr: "ServiceOptions.Relay is required"},
		{Name: "relay", Opts: notify.ServiceOptions{Relay: relay}},
		{Name: "relay and a timeout", Opts: notify.ServiceOptions{Relay: relay, Timeouts: protocol.Timeouts{notify.StBusy: time.Second}}},
	}, notify.NewService,
		func(svc *notify.Service) *protocol.Spec { return svc.Servers()[0].Spec },
		func(o notify.ServiceOptions) *protocol.Spec { return notify.Spec().WithTimeouts(o.Timeouts) })
}
