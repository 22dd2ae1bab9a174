package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestNetworkParameters: GET /api/parameters gives wallets the protocol
// parameters at the top level, as before, and with them the network's slot
// length, f and Leios limits when the node was given them — so a tool
// derives the network's capacity from the network — and nothing more when
// it was not.
func TestNetworkParameters(t *testing.T) {
	params := ledger.DefaultParams()
	leios := consensus.DefaultLeiosParams()
	leios.MinCertGap = 12
	for _, tc := range []struct {
		name string
		opts Options
		want Parameters
		says []string // in the body
		not  []string
	}{
		{
			"the network's",
			Options{Params: params, Clock: consensus.Clock{SlotLength: time.Second}, ActiveSlotsCoeff: "0.05", LeiosParams: leios},
			Parameters{Params: params, SlotLengthMs: 1000, ActiveSlotsCoeff: "0.05", Leios: &leios},
			[]string{`"minFeeA":44`, `"slotLengthMs":1000`, `"activeSlotsCoeff":0.05`, `"minCertGap":12`, `"ebMaxClosureBytes":12000000`},
			nil,
		},
		{
			"the ledger's alone",
			Options{Params: params, Clock: consensus.Clock{SlotLength: time.Second}},
			Parameters{Params: params},
			[]string{`"minFeeA":44`},
			[]string{"slotLengthMs", "activeSlotsCoeff", "leios"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Registry = prometheus.NewRegistry()
			s, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			code, body := get(t, s.Handler(), "/api/parameters")
			var got Parameters
			if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("GET /api/parameters: %d %s (%v), want %+v", code, body, err, tc.want)
			}
			var wallet ledger.Params // what a wallet reads is unchanged
			if err := json.Unmarshal([]byte(body), &wallet); err != nil || wallet != params {
				t.Errorf("as the ledger's parameters: %+v (%v)", wallet, err)
			}
			for _, want := range tc.says {
				if !strings.Contains(body, want) {
					t.Errorf("the body lacks %s: %s", want, body)
				}
			}
			for _, unwanted := range tc.not {
				if strings.Contains(body, unwanted) {
					t.Errorf("the body has %s: %s", unwanted, body)
				}
			}
		})
	}
}
