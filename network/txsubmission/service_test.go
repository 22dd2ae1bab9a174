package txsubmission_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// TestNewService: a missing required part is an error naming it; the
// timeouts given override the Spec's, the others are kept.
func TestNewService(t *testing.T) {
	mempool := newMempool(newWallet(1).genesis())
	for _, tc := range []struct {
		name    string
		opts    txsubmission.ServiceOptions
		wantErr string
	}{
		{"no mempool", txsubmission.ServiceOptions{Options: txsubmission.Options{MaxTxsPerRequest: 10}}, "ServiceOptions.Mempool is required"},
		{"mempool", txsubmission.ServiceOptions{Mempool: mempool}, ""},
		{"mempool and a timeout", txsubmission.ServiceOptions{Mempool: mempool, Timeouts: protocol.Timeouts{txsubmission.StTxs: time.Second}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := txsubmission.NewService(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := txsubmission.Spec().WithTimeouts(tc.opts.Timeouts)
			got := svc.Servers()[0].Spec
			for state, st := range want.States {
				if got.States[state].Timeout != st.Timeout {
					t.Errorf("%s: timeout %v, want %v", state, got.States[state].Timeout, st.Timeout)
				}
			}
		})
	}
}
