package notify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/notify"
)

// TestNewService: a missing required part is an error naming it; the
// timeouts given override the Spec's, the others are kept.
func TestNewService(t *testing.T) {
	relay := newTestNet(t, 1).relay(t)
	for _, tc := range []struct {
		name    string
		opts    notify.ServiceOptions
		wantErr string
	}{
		{"no relay", notify.ServiceOptions{Timeouts: protocol.Timeouts{notify.StBusy: time.Second}}, "ServiceOptions.Relay is required"},
		{"relay", notify.ServiceOptions{Relay: relay}, ""},
		{"relay and a timeout", notify.ServiceOptions{Relay: relay, Timeouts: protocol.Timeouts{notify.StBusy: time.Second}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := notify.NewService(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := notify.Spec().WithTimeouts(tc.opts.Timeouts)
			got := svc.Servers()[0].Spec
			for state, st := range want.States {
				if got.States[state].Timeout != st.Timeout {
					t.Errorf("%s: timeout %v, want %v", state, got.States[state].Timeout, st.Timeout)
				}
			}
		})
	}
}
