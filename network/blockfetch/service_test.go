package blockfetch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// TestNewService: a missing required part is an error naming it; the
// timeouts given override the Spec's, the others are kept.
func TestNewService(t *testing.T) {
	chain := chaintest.New(3)
	for _, tc := range []struct {
		name    string
		opts    blockfetch.ServiceOptions
		wantErr string
	}{
		{"no blocks", blockfetch.ServiceOptions{Timeouts: protocol.Timeouts{blockfetch.StIdle: time.Second}}, "ServiceOptions.Blocks is required"},
		{"blocks", blockfetch.ServiceOptions{Blocks: blockfetch.FromSlices(chain.BlockRange)}, ""},
		{"blocks and a timeout", blockfetch.ServiceOptions{Blocks: blockfetch.FromSlices(chain.BlockRange), Timeouts: protocol.Timeouts{blockfetch.StIdle: time.Second}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := blockfetch.NewService(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := blockfetch.Spec().WithTimeouts(tc.opts.Timeouts)
			got := svc.Servers()[0].Spec
			for state, st := range want.States {
				if got.States[state].Timeout != st.Timeout {
					t.Errorf("%s: timeout %v, want %v", state, got.States[state].Timeout, st.Timeout)
				}
			}
		})
	}
}
