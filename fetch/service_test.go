package fetch

import (
	"testing"
	"time"

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
		func(svc *Service) *protocol.Spec { return svc.Servers()[0].Spec },
		func(o ServiceOptions) *protocol.Spec { return Spec(testLimits).WithTimeouts(o.Timeouts) })
}
