package peersharing_test

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/peersharing"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// TestNewService: peer sharing requires nothing.
func TestNewService(t *testing.T) {
	protocoltest.CheckNewService(t, []protocoltest.ServiceCase[peersharing.ServiceOptions]{
		{Name: "zero options", Opts: peersharing.ServiceOptions{}},
		{Name: "a timeout", Opts: peersharing.ServiceOptions{Timeouts: protocol.Timeouts{peersharing.StBusy: time.Second}}},
	}, peersharing.NewService,
		func(svc *peersharing.Service) *protocol.Spec { return svc.Servers()[0].Spec },
		func(o peersharing.ServiceOptions) *protocol.Spec { return peersharing.Spec().WithTimeouts(o.Timeouts) })
}
