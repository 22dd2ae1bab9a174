package fetch

import (
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// TestNewService: a missing required part is an error naming it; the
// timeouts given override the Spec's, the others are kept.
func TestNewService(t *testing.T) {
	fetcher, err := New(Options{Store: openDB(t, t.TempDir()), Ingest: &bodyIngest{}, Limits: testLimits, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		opts    ServiceOptions
		wantErr string
	}{
		{"no fetcher", ServiceOptions{Timeouts: protocol.Timeouts{StIdle: time.Second}}, "ServiceOptions.Fetcher is required"},
		{"fetcher", ServiceOptions{Fetcher: fetcher}, ""},
		{"fetcher and a timeout", ServiceOptions{Fetcher: fetcher, Timeouts: protocol.Timeouts{StIdle: time.Second}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := NewService(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Spec(testLimits).WithTimeouts(tc.opts.Timeouts)
			got := svc.Servers()[0].Spec
			for state, st := range want.States {
				if got.States[state].Timeout != st.Timeout {
					t.Errorf("%s: timeout %v, want %v", state, got.States[state].Timeout, st.Timeout)
				}
			}
		})
	}
}
