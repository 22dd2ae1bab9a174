package layout

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestEmbeddedTemplate keeps the compiled-in template equal to its source
// of truth in configs/.
func TestEmbeddedTemplate(t *testing.T) {
	source, err := os.ReadFile("../../../configs/devnet.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(source, devnetTemplate) {
		t.Fatal("lab/devnet/layout/templates/devnet.json differs from configs/devnet.json: copy configs/devnet.json over it")
	}
}

// TestShippedTemplates checks the templates carry the devnet values docs/operations.md states and
// the packages' default parameters.
func TestShippedTemplates(t *testing.T) {
	tests := []struct {
		file          string
		slotLengthMs  int64
		f             string
		k             int
		lHdr, lVote   int
		lDiff, minGap int
		sigma, tau    string
	}{
		{"../../../configs/devnet.json", 100, "0.1", 10, 1, 4, 7, 10, "0.99", "0.75"},
		{"../../../configs/testnet.json", 1000, "0.05", 108, 1, 4, 7, 10, "0.99", "0.75"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tmpl, err := LoadTemplate(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if tmpl.SlotLengthMs != tt.slotLengthMs || string(tmpl.ActiveSlotsCoeff) != tt.f || tmpl.SecurityParam != tt.k {
				t.Errorf("slot %d ms, f %s, k %d; want %d ms, f %s, k %d",
					tmpl.SlotLengthMs, tmpl.ActiveSlotsCoeff, tmpl.SecurityParam, tt.slotLengthMs, tt.f, tt.k)
			}
			l := tmpl.Leios
			if l.LHdr != tt.lHdr || l.LVote != tt.lVote || l.LDiff != tt.lDiff || l.MinCertGap != tt.minGap ||
				string(l.CommitteeStakeFraction) != tt.sigma || string(l.QuorumStakeFraction) != tt.tau {
				t.Errorf("leios %+v; want L_hdr %d, L_vote %d, L_diff %d, min cert gap %d, σ_c %s, τ %s",
					l, tt.lHdr, tt.lVote, tt.lDiff, tt.minGap, tt.sigma, tt.tau)
			}
			if tmpl.ProtocolParams != ledger.DefaultParams() {
				t.Errorf("protocolParams %+v, want ledger.DefaultParams %+v", tmpl.ProtocolParams, ledger.DefaultParams())
			}
			want := consensus.DefaultLeiosParams()
			want.LHdr, want.LVote, want.LDiff, want.MinCertGap = l.LHdr, l.LVote, l.LDiff, l.MinCertGap
			want.CommitteeStakeFraction, want.QuorumStakeFraction = l.CommitteeStakeFraction, l.QuorumStakeFraction
			if l != want {
				t.Errorf("leios limits %+v differ from consensus.DefaultLeiosParams %+v", l, want)
			}
		})
	}
	embedded, err := LoadTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, _ := LoadTemplate("../../../configs/devnet.json")
	if embedded != fromFile {
		t.Errorf("the embedded template decodes to %+v, configs/devnet.json to %+v", embedded, fromFile)
	}
}

func TestParseTemplate(t *testing.T) {
	const base = `"slotLengthMs": 200, "activeSlotsCoeff": 0.5, "securityParam": 5, "poolStake": 7, "fundsPerAddress": 9`
	tests := []struct {
		name    string
		json    string
		wantErr string // "" = accepted
	}{
		{"minimal", `{` + base + `}`, ""},
		{"unknown key", `{` + base + `, "securityParameter": 5}`, "unknown field"},
		{"generated part", `{` + base + `, "pools": []}`, "unknown field"},
		{"unknown leios key", `{` + base + `, "leios": {"lVotes": 4}}`, `leios: json: unknown field "lVotes"`},
		{"Fait Accompli's seats", `{` + base + `, "leios": {"committeeSeats": 100}}`, "leios.committeeSeats is no longer a parameter"},
		{"no pool stake", `{"slotLengthMs": 200, "activeSlotsCoeff": 0.5, "securityParam": 5, "fundsPerAddress": 9}`, "poolStake"},
		{"no funds", `{"slotLengthMs": 200, "activeSlotsCoeff": 0.5, "securityParam": 5, "poolStake": 7}`, "fundsPerAddress"},
		{"network mismatch", `{` + base + `, "networkId": 1}`, "differ"},
		{"not json", `slotLengthMs: 200`, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := parseTemplate([]byte(tt.json))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Omitted parameters take the packages' defaults.
			if tmpl.ProtocolParams != ledger.DefaultParams() || tmpl.Leios != consensus.DefaultLeiosParams() {
				t.Errorf("omitted parameters are %+v / %+v, want the defaults", tmpl.ProtocolParams, tmpl.Leios)
			}
			if tmpl.SlotLengthMs != 200 || tmpl.ActiveSlotsCoeff != json.Number("0.5") || tmpl.PoolStake != 7 || tmpl.FundsPerAddress != 9 {
				t.Errorf("decoded %+v", tmpl)
			}
		})
	}
}
