package peersharing_test

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/peersharing"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// TestNewService: nothing is required; the timeouts given override the
// Spec's, the others are kept.
func TestNewService(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts peersharing.ServiceOptions
	}{
		{"zero options", peersharing.ServiceOptions{}},
		{"a timeout", peersharing.ServiceOptions{Timeouts: protocol.Timeouts{peersharing.StBusy: time.Second}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := peersharing.NewService(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := peersharing.Spec().WithTimeouts(tc.opts.Timeouts)
			got := svc.Servers()[0].Spec
			for state, st := range want.States {
				if got.States[state].Timeout != st.Timeout {
					t.Errorf("%s: timeout %v, want %v", state, got.States[state].Timeout, st.Timeout)
				}
			}
		})
	}
}
