package apiclient

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/api"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestRejectionRuleName: a rejection groups by the wording of the rule its
// code names, without the detail; an answer with no ledger rule is its own.
func TestRejectionRuleName(t *testing.T) {
	tests := []struct {
		rejection RejectedError
		want      string
	}{
		{RejectedError{Reason: "mempool: tx 0f: ledger: input not in UTxO: ab12#0", Rule: "input-missing"}, "ledger: input not in UTxO"},
		{RejectedError{Reason: "mempool: tx 0f: ledger: fee below minimum: fee 1, minimum 155425", Rule: "fee-too-small"}, "ledger: fee below minimum"},
		{RejectedError{Reason: "ledger: malformed transaction: not an array", Rule: "malformed"}, "ledger: malformed transaction"},
		{RejectedError{Reason: "mempool: tx already in the mempool", Rule: apitypes.RuleInMempool}, "mempool: tx already in the mempool"},
		{RejectedError{Reason: "reading the tx: unexpected EOF"}, "reading the tx: unexpected EOF"},
	}
	for _, tt := range tests {
		if got := tt.rejection.RuleName(); got != tt.want {
			t.Errorf("ruleName of %+v = %q, want %q", tt.rejection, got, tt.want)
		}
	}
}

// TestNetworkParameters: the client reads the network's timing and Leios
// limits from a node's GET /api/parameters — the genesis' own values, read
// back into the node's types — and from an older node's answer the
// protocol parameters alone.
func TestNetworkParameters(t *testing.T) {
	leios := consensus.DefaultLeiosParams()
	for _, tc := range []struct {
		name     string
		opts     api.Options
		slotMs   int64
		f        json.Number
		hasLeios bool
	}{
		{"a node that gives them", api.Options{Params: ledger.DefaultParams(), Clock: consensus.Clock{SlotLength: 100 * time.Millisecond}, ActiveSlotsCoeff: "0.1", LeiosParams: leios}, 100, "0.1", true},
		{"a node that does not", api.Options{Params: ledger.DefaultParams()}, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Registry = prometheus.NewRegistry()
			s, err := api.New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			got, err := NetworkParameters(context.Background(), srv.Client(), srv.URL)
			if err != nil || got.SlotLengthMs != tc.slotMs || got.ActiveSlotsCoeff != tc.f || (got.Leios != nil) != tc.hasLeios {
				t.Fatalf("got %+v (%v)", got, err)
			}
			var params ledger.Params
			if readAs(t, got.ProtocolParams, &params); params != ledger.DefaultParams() {
				t.Errorf("protocol parameters %+v, want %+v", params, ledger.DefaultParams())
			}
			if got.Leios != nil {
				var l consensus.LeiosParams
				if readAs(t, *got.Leios, &l); !reflect.DeepEqual(l, leios) {
					t.Errorf("Leios parameters %+v, want %+v", l, leios)
				}
			}
		})
	}
}

// readAs reads wire's JSON into node, a node's own type.
func readAs(t *testing.T, wire, node any) {
	t.Helper()
	raw, err := json.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, node); err != nil {
		t.Fatal(err)
	}
}
