package capacity

import (
	"crypto/ed25519"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/ledger"
)

// template reads a genesis template of configs/ into the model's inputs.
func template(t *testing.T, name string) Params {
	t.Helper()
	raw, err := os.ReadFile("../../configs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	g := consensus.Genesis{Leios: consensus.DefaultLeiosParams()}
	var tmpl struct {
		SlotLengthMs     int64                  `json:"slotLengthMs"`
		ActiveSlotsCoeff json.Number            `json:"activeSlotsCoeff"`
		Leios            *consensus.LeiosParams `json:"leios"`
	}
	tmpl.Leios = &g.Leios
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		t.Fatal(err)
	}
	g.SlotLengthMs, g.ActiveSlotsCoeff = tmpl.SlotLengthMs, tmpl.ActiveSlotsCoeff
	p, err := FromGenesis(&g)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func near(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance }

// TestPCert: (1 − f)^(g − 1), by hand.
func TestPCert(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		gap  int
		want float64
	}{
		{0.05, 10, 0.630249409}, // 0.95^9
		{0.1, 10, 0.387420489},  // 0.9^9
		{0.2, 3, 0.64},
		{0.5, 2, 0.5},
		{0.05, 1, 1}, // the next RB always comes a slot later at least
		{0.05, 0, 1},
		{1, 10, 0}, // every slot has an RB: the next always comes too early
	} {
		p := Params{ActiveSlotsCoeff: tc.f, MinCertGap: tc.gap}
		if got := p.PCert(); !near(got, tc.want, 1e-9) {
			t.Errorf("f %g, gap %d: p_cert %v, want %v", tc.f, tc.gap, got, tc.want)
		}
	}
}

// TestCapacity: the templates' capacity at 200 B and 3,700 B a tx, by
// hand. At 200 B the EB body bounds an EB: (524,288 − 5) / 39 = 13,443
// txs; at 3,700 B the closure: 12,000,000 / 3,700 = 3,243. An RB body
// holds (90,112 − 7) / size: 450 and 24.
func TestCapacity(t *testing.T) {
	testnet, devnet := template(t, "testnet.json"), template(t, "devnet.json")
	for _, tc := range []struct {
		name      string
		p         Params
		size      float64
		ebTxs     int
		boundBy   string
		rbTxs     int
		txsPerRB  float64
		txPerS    float64
		txkBPerS  float64
		intervalS float64
		budgetMs  int64
	}{
		// 0.630249409 × 13,443 + 0.369750591 × 450, over 20 s.
		{"testnet 200 B", testnet, 200, 13_443, "ebMaxBodyBytes", 450, 8638.8306, 431.9415, 86.3883, 20, 5000},
		// 0.630249409 × 3,243 + 0.369750591 × 24, over 20 s.
		{"testnet 3,700 B", testnet, 3700, 3243, "ebMaxClosureBytes", 24, 2052.7728, 102.6386, 379.7630, 20, 5000},
		// 0.387420489 × 13,443 + 0.612579511 × 450, over 1 s.
		{"devnet 200 B", devnet, 200, 13_443, "ebMaxBodyBytes", 450, 5483.7544, 5483.7544, 1096.7509, 1, 500},
		// 0.387420489 × 3,243 + 0.612579511 × 24, over 1 s.
		{"devnet 3,700 B", devnet, 3700, 3243, "ebMaxClosureBytes", 24, 1271.1065, 1271.1065, 4703.0941, 1, 500},
		// A tx limit below the others binds.
		{"ebMaxTxs", Params{SlotLengthMs: 1000, ActiveSlotsCoeff: 0.5, RBMaxBodyBytes: 1007, EBMaxBodyBytes: 1 << 20, EBMaxClosureBytes: 1 << 30, EBMaxTxs: 100, MinCertGap: 2},
			100, 100, "ebMaxTxs", 10, 55, 27.5, 2.75, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.p, tc.size)
			if err != nil {
				t.Fatal(err)
			}
			if m.EBTxs != tc.ebTxs || m.EBBoundBy != tc.boundBy || m.RBTxs != tc.rbTxs {
				t.Errorf("EB %d txs (bound by %s), RB %d; want %d (%s), %d", m.EBTxs, m.EBBoundBy, m.RBTxs, tc.ebTxs, tc.boundBy, tc.rbTxs)
			}
			if !near(m.TxsPerRB, tc.txsPerRB, 1e-3) || !near(m.TxPerSecond, tc.txPerS, 1e-3) || !near(m.TxkBPerSecond, tc.txkBPerS, 1e-3) {
				t.Errorf("%v txs per RB, %v tx/s, %v TxkB/s; want %v, %v, %v", m.TxsPerRB, m.TxPerSecond, m.TxkBPerSecond, tc.txsPerRB, tc.txPerS, tc.txkBPerS)
			}
			if m.MeanRBIntervalS != tc.intervalS || m.ClosureBudgetMs != tc.budgetMs || m.Formula != Formula {
				t.Errorf("RB every %v s, closure budget %d ms, formula %q", m.MeanRBIntervalS, m.ClosureBudgetMs, m.Formula)
			}
		})
	}
}

// TestModelRefusesNonsense: inputs the model cannot divide by are errors.
func TestModelRefusesNonsense(t *testing.T) {
	good := Params{SlotLengthMs: 100, ActiveSlotsCoeff: 0.1, RBMaxBodyBytes: 1, EBMaxBodyBytes: 1, EBMaxClosureBytes: 1, EBMaxTxs: 1}
	for _, tc := range []struct {
		name string
		edit func(*Params)
		size float64
	}{
		{"no slot length", func(p *Params) { p.SlotLengthMs = 0 }, 200},
		{"f of 0", func(p *Params) { p.ActiveSlotsCoeff = 0 }, 200},
		{"f over 1", func(p *Params) { p.ActiveSlotsCoeff = 1.5 }, 200},
		{"f NaN", func(p *Params) { p.ActiveSlotsCoeff = math.NaN() }, 200},
		{"no EB limit", func(p *Params) { p.EBMaxTxs = 0 }, 200},
		{"a negative gap", func(p *Params) { p.MinCertGap = -1 }, 200},
		{"no tx size", func(*Params) {}, 0},
	} {
		p := good
		tc.edit(&p)
		if _, err := New(p, tc.size); err == nil || !strings.HasPrefix(err.Error(), "capacity: ") {
			t.Errorf("%s: %v, want an error", tc.name, err)
		}
	}
}

// TestLatencyModel: the Monte Carlo's p50 and p95 lie in the bands the
// testnet template's chain gives (1 s slots, f 0.05, minCertGap 10: p50
// 45–49 s, p95 105–109 s), its mean within 1 % of the closed form, and it
// gives the same figures twice.
func TestLatencyModel(t *testing.T) {
	for _, tc := range []struct {
		name             string
		p                Params
		p50From, p50To   int64
		p95From, p95To   int64
		closedFormMeanMs int64
	}{
		// 1000 × (20 − 0.5 + 20 / 0.630249409)
		{"testnet", template(t, "testnet.json"), 45_000, 49_000, 105_000, 109_000, 51_233},
		// 100 × (10 − 0.5 + 10 / 0.387420489)
		{"devnet", template(t, "devnet.json"), 3000, 3500, 6300, 7000, 3531},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.p, 200)
			if err != nil {
				t.Fatal(err)
			}
			l := m.Latency
			if l.P50Ms < tc.p50From || l.P50Ms > tc.p50To || l.P95Ms < tc.p95From || l.P95Ms > tc.p95To {
				t.Errorf("p50 %d ms, p95 %d ms; want %d–%d and %d–%d", l.P50Ms, l.P95Ms, tc.p50From, tc.p50To, tc.p95From, tc.p95To)
			}
			if l.MeanMs != tc.closedFormMeanMs {
				t.Errorf("closed-form mean %d ms, want %d", l.MeanMs, tc.closedFormMeanMs)
			}
			if l.Txs != latencyTxs || l.Model != LatencyModelText {
				t.Errorf("%d txs, model %q", l.Txs, l.Model)
			}
			again, _ := New(tc.p, 3700) // the tx size plays no part in the latency
			alone, err := NewLatencyModel(tc.p)
			if again.Latency != l || alone != l || err != nil {
				t.Errorf("a second run gave %+v, the model alone %+v (%v), the first %+v", again.Latency, alone, err, l)
			}
		})
	}
}

// TestLatencyModelMean: the Monte Carlo's mean is within 1 % of the
// closed form, whatever the gap and f.
func TestLatencyModelMean(t *testing.T) {
	for _, tc := range []struct {
		f   float64
		gap int
	}{{0.05, 10}, {0.1, 10}, {0.3, 4}, {0.05, 0}, {1, 1}} {
		p := Params{SlotLengthMs: 1000, ActiveSlotsCoeff: tc.f, MinCertGap: tc.gap}
		l := newLatencyModel(p)
		mean := meanOfModel(p)
		if !near(mean, float64(l.MeanMs), 0.01*float64(l.MeanMs)) {
			t.Errorf("f %g, gap %d: the Monte Carlo's mean %.0f ms, the closed form %d", tc.f, tc.gap, mean, l.MeanMs)
		}
	}
}

// meanOfModel reruns the Monte Carlo's draws for their mean: the model
// keeps only its percentiles.
func meanOfModel(p Params) float64 {
	l := latencySamples(p)
	var sum float64
	for _, ms := range l {
		sum += float64(ms)
	}
	return sum / float64(len(l))
}

// TestModelString: the model's lines give the figures and the formula.
func TestModelString(t *testing.T) {
	m, err := New(template(t, "testnet.json"), 200)
	if err != nil {
		t.Fatal(err)
	}
	got := m.String()
	for _, want := range []string{
		"structural capacity 432 tx/s (86 TxkB/s) at 200 B/tx: one EB of 13,443 txs (bound by ebMaxBodyBytes) per RB, certified with p_cert 0.63, else an RB body of 450 txs; RB every 20 s; latency model p50 45 s, p95 105 s",
		"= (p_cert × EB txs + (1 − p_cert) × RB txs) / (slot / f) = (0.63 × 13,443 + 0.37 × 450) / (1 s / 0.05); p_cert = (1 − f)^(minCertGap − 1) = 0.95^9",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the model's lines lack %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("want two lines:\n%s", got)
	}
}

// TestBoundsAreTheForges: the txs the model puts in an RB body and an EB
// are those the forge's walk of a mempool takes, whichever limit binds.
func TestBoundsAreTheForges(t *testing.T) {
	params := ledger.DefaultParams()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	address := ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	defaults := block.DefaultEBLimits
	for _, tc := range []struct {
		name    string
		outputs int // paid besides the change: the tx's size
		limits  block.EBLimits
		boundBy string
	}{
		{"small txs: the body", 0, defaults, "ebMaxBodyBytes"},
		{"large txs: the closure", 24, defaults, "ebMaxClosureBytes"},
		{"a low tx limit", 0, block.EBLimits{MaxBodyBytes: defaults.MaxBodyBytes, MaxClosureBytes: defaults.MaxClosureBytes, MaxTxs: 500}, "ebMaxTxs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outputs := slices.Repeat([]ledger.TxOut{{Address: address, Coin: 2_000_000}}, tc.outputs)
			tx, err := ledger.BuildPayment(params, []ledger.TxIn{{Index: 0}}, 1_000_000_000, outputs, address, nil, []ed25519.PrivateKey{key})
			if err != nil {
				t.Fatal(err)
			}
			size := tx.Size()
			p := Params{
				SlotLengthMs: 1000, ActiveSlotsCoeff: 0.05, RBMaxBodyBytes: 90_112,
				EBMaxBodyBytes: tc.limits.MaxBodyBytes, EBMaxClosureBytes: tc.limits.MaxClosureBytes, EBMaxTxs: tc.limits.MaxTxs, MinCertGap: 10,
			}
			m, err := New(p, float64(size))
			if err != nil {
				t.Fatal(err)
			}
			// The walk counts sizes, not identities: one tx many times will do.
			txs := slices.Repeat([]*ledger.Tx{tx}, m.RBTxs+m.EBTxs+10)
			rb, eb := forge.SelectValidTxs(1, slices.Values(txs), nil, p.RBMaxBodyBytes, tc.limits)
			if len(rb) != m.RBTxs || len(eb) != m.EBTxs || m.EBBoundBy != tc.boundBy {
				t.Errorf("at %d B a tx the forge took %d txs into the RB and %d into the EB; the model says %d and %d (bound by %s, want %s)",
					size, len(rb), len(eb), m.RBTxs, m.EBTxs, m.EBBoundBy, tc.boundBy)
			}
		})
	}
}

// The model's inputs carry the genesis' slot length as a duration too.
func TestParamsTimes(t *testing.T) {
	p := template(t, "devnet.json")
	if p.SlotLength() != 100*time.Millisecond || p.MeanRBInterval() != time.Second || p.ClosureBudget() != 500*time.Millisecond {
		t.Errorf("slot %v, RB interval %v, closure budget %v", p.SlotLength(), p.MeanRBInterval(), p.ClosureBudget())
	}
}

// A Model survives a JSON round trip: the devnet report holds one, and
// its tests and tools read the report back.
func TestModelJSON(t *testing.T) {
	m, err := New(NewParams(time.Second, 0.05, consensus.DefaultLeiosParams()), 200)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Model
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("reading a model back: %v", err)
	}
	if back.Params != m.Params || back.TxPerSecond != m.TxPerSecond {
		t.Fatalf("read back %+v, wrote %+v", back, m)
	}
}
