package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/apitypes"
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
	wireLeios := leiosParams(leios)
	for _, tc := range []struct {
		name string
		opts Options
		want apitypes.Parameters
		says []string // in the body
		not  []string
	}{
		{
			"the network's",
			Options{Params: params, Clock: consensus.Clock{SlotLength: time.Second}, ActiveSlotsCoeff: "0.05", LeiosParams: leios},
			apitypes.Parameters{ProtocolParams: protocolParams(params), SlotLengthMs: 1000, ActiveSlotsCoeff: "0.05", Leios: &wireLeios},
			[]string{`"minFeeA":44`, `"slotLengthMs":1000`, `"activeSlotsCoeff":0.05`, `"minCertGap":12`, `"ebMaxClosureBytes":12000000`},
			nil,
		},
		{
			"the ledger's alone",
			Options{Params: params, Clock: consensus.Clock{SlotLength: time.Second}},
			apitypes.Parameters{ProtocolParams: protocolParams(params)},
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
			var got apitypes.Parameters
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

// TestParametersMirrorTheNodes: the wire's parameters (package apitypes,
// which imports nothing of the node) are the ledger's and the genesis'
// own, field for field: each written as the node's type writes it, and
// none left out, so a field added to one is added to the other.
func TestParametersMirrorTheNodes(t *testing.T) {
	params := ledger.Params{MinFeeA: 1, MinFeeB: 2, CoinsPerUTxOByte: 3, MaxTxSize: 4, NetworkID: 5}
	leios := consensus.DefaultLeiosParams()
	for _, tc := range []struct {
		name       string
		node, wire any
	}{
		{"ledger.Params", params, protocolParams(params)},
		{"consensus.LeiosParams", leios, leiosParams(leios)},
	} {
		node, err := json.Marshal(tc.node)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := json.Marshal(tc.wire)
		if err != nil {
			t.Fatal(err)
		}
		var nodeFields, wireFields map[string]any
		if err := json.Unmarshal(node, &nodeFields); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(wire, &wireFields); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(nodeFields, wireFields) {
			t.Errorf("%s writes %s, the API %s", tc.name, node, wire)
		}
	}
}
