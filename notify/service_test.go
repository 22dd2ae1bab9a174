package notify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/leios/protocolset"
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
		func(svc *notify.Service) *protocol.Spec {
			for _, srv := range svc.Servers() {
				if srv.Spec.Name == "notify" {
					return srv.Spec
				}
			}
			return nil
		},
		func(o notify.ServiceOptions) *protocol.Spec { return notify.Spec().WithTimeouts(o.Timeouts) })
}

// Each set serves its streams: the CIP's three, the prototype's one, or
// all four.
func TestServiceServesTheChosenSets(t *testing.T) {
	relay := newTestNet(t, 1).relay(t)
	for _, tc := range []struct {
		set  protocolset.Set
		want string
	}{
		{protocolset.CIP, "/leios/announce/1 /leios/votes/1 /leios/blocknotify/1"},
		{protocolset.Prototype, "/leios/notify/1"},
		{protocolset.Both, "/leios/announce/1 /leios/votes/1 /leios/blocknotify/1 /leios/notify/1"},
	} {
		svc, err := notify.NewService(notify.ServiceOptions{Relay: relay, Protocols: tc.set})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, srv := range svc.Servers() {
			ids = append(ids, srv.Spec.ID())
		}
		if got := strings.Join(ids, " "); got != tc.want {
			t.Fatalf("%s serves %s, want %s", tc.set, got, tc.want)
		}
	}
}
