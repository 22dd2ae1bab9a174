package fetch

import (
	"slices"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/leios/protocolset"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

func TestNewService(t *testing.T) {
	fetcher, err := New(Options{Store: openDB(t, t.TempDir()), Ingest: &bodyIngest{}, Limits: testLimits, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	protocoltest.CheckNewService(t, []protocoltest.ServiceCase[ServiceOptions]{
		{Name: "no fetcher", Opts: ServiceOptions{Timeouts: protocol.Timeouts{StIdle: time.Second}}, WantErr: "ServiceOptions.Fetcher is required"},
		{Name: "fetcher", Opts: ServiceOptions{Fetcher: fetcher}},
		{Name: "fetcher and a timeout", Opts: ServiceOptions{Fetcher: fetcher, Timeouts: protocol.Timeouts{StIdle: time.Second}}},
	}, NewService,
		func(svc *Service) *protocol.Spec { s := svc.Servers(); return s[len(s)-1].Spec },
		func(o ServiceOptions) *protocol.Spec { return Spec(testLimits).WithTimeouts(o.Timeouts) })

	// Protocols chooses the versions served, preferred first.
	for _, tc := range []struct {
		set  protocolset.Set
		want []string
	}{
		{protocolset.Both, []string{"/leios/fetch/2", "/leios/fetch/1"}},
		{protocolset.CIP, []string{"/leios/fetch/2"}},
		{protocolset.Prototype, []string{"/leios/fetch/1"}},
	} {
		svc, err := NewService(ServiceOptions{Fetcher: fetcher, Protocols: tc.set})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, srv := range svc.Servers() {
			got = append(got, srv.Spec.ID())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: serves %v, want %v", tc.set, got, tc.want)
		}
	}
}
