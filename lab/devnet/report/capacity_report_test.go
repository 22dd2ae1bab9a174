package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/load"
)

// TestProtocolTimeWindows: the report's windows are so many mean RB
// intervals — the devnet template's old fixed widths at its 1 s interval —
// with a floor of several status polls where they are a presentation.
func TestProtocolTimeWindows(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		rbInterval                  time.Duration
		timeline, certified, onRate time.Duration
	}{
		{"devnet (100 ms, f 0.1)", time.Second, 10 * time.Second, 30 * time.Second, 5 * time.Second},
		{"testnet (1 s, f 0.05)", 20 * time.Second, 200 * time.Second, 600 * time.Second, 100 * time.Second},
		{"a fast one (10 ms, f 0.1)", 100 * time.Millisecond, 10 * time.Second, 3 * time.Second, 5 * time.Second},
	} {
		r := loadRun{rbInterval: tc.rbInterval}
		timeline, certified, onRate := timelineWidth(tc.rbInterval), r.certifiedWindow(), rbWindow(onChainRateRBs, tc.rbInterval, minOnChainRateSpan)
		if timeline != tc.timeline || certified != tc.certified || onRate != tc.onRate {
			t.Errorf("%s: timeline %v, certified window %v, on-chain rate over %v; want %v, %v, %v",
				tc.name, timeline, certified, onRate, tc.timeline, tc.certified, tc.onRate)
		}
	}
}

// TestCapacityReport: the devnet's capacity section is the model at the
// firehose's mean tx size, the chain's figures over the span, and the
// closures of the span's EBs at their voting nodes against L_hdr + L_vote
// (500 ms at 100 ms slots); without a span, the model alone; with a
// genesis the model cannot use, why.
func TestCapacityReport(t *testing.T) {
	g := &consensus.Genesis{SlotLengthMs: 100, ActiveSlotsCoeff: "0.1", Leios: consensus.DefaultLeiosParams()}
	r := fakeLoadRun()
	// A: node-0 10 ms, node-1 300 ms; B: node-0 12 ms, node-1 700 ms; C:
	// neither voting node held it; D: no voting node.
	r.ebs[0].ClosureMs = map[string]int64{"node-0": 10, "node-1": 300}
	r.ebs[1].ClosureMs = map[string]int64{"node-0": 12, "node-1": 700, "relay": 5}
	span, _ := load.NewSpan(loadStart, 0, loadStart.Add(70*time.Second))
	latency := &load.Latency{Txs: 10, P50Ms: 2500, P95Ms: 6000}
	txs := &load.Report{MeanTxBytes: 200, LatencyInSpan: latency}

	c := newCapacityReport(g, r, &span, txs)
	if c.Problem != "" || c.Model.MeanTxBytes != 200 || c.Model.ClosureBudgetMs != 500 || int(c.Model.TxPerSecond) != 5483 {
		t.Fatalf("model %+v, problem %q", c.Model, c.Problem)
	}
	if ch := c.Chain; ch == nil || !near(ch.OnChainTxPerSecond, 420.0/70) || ch.Latency != latency || ch.FromS != 0 || ch.ToS != 70 {
		t.Errorf("chain figures %+v, want 420 txs over 70 s and the firehose's latency in the span", ch)
	}
	cl := c.Closures
	if cl == nil || cl.BudgetMs != 500 || cl.Pairs != 6 || cl.Held != 4 || cl.Within != 3 || cl.WithinShare != 0.5 || *cl.P50Ms != 156 || *cl.P95Ms != 700 {
		t.Errorf("closures %+v, want 6 pairs (A, B, C's two voters each), 4 held, 3 within 500 ms, p50 156 ms, p95 700 ms", cl)
	}

	var out bytes.Buffer
	printCapacity(&out, c)
	for _, want := range []string{
		"structural capacity 5,484 tx/s (1,097 TxkB/s) at 200 B/tx",
		"  measured 0–70 s after the system start: on chain 6.0 tx/s (1.2 TxkB/s at the firehose's mean 200 B/tx) = 0 % of the capacity",
		"  submit to chain p50 2.50 s, p95 6.00 s over 10 txs first sent in the span; the model's p50 3.21 s, p95 6.63 s",
		"  EB closures within L_hdr + L_vote = 500 ms of the slot start: 50 % of 6 (EB, voting node) pairs of the span; of the 4 held, p50 156 ms, p95 700 ms",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the lines lack %q:\n%s", want, out.String())
		}
	}

	checkFormatted(t, c, out.String())

	if c := newCapacityReport(g, r, nil, txs); c.Chain != nil || c.Closures != nil || c.Problem != "" {
		t.Errorf("without a span: %+v", c)
	}
	bad := *g
	bad.ActiveSlotsCoeff = "0"
	c = newCapacityReport(&bad, r, &span, txs)
	out.Reset()
	printCapacity(&out, c)
	if c.Problem == "" || !strings.Contains(out.String(), "the network's capacity not modelled: capacity: activeSlotsCoeff 0") {
		t.Errorf("with f 0: %+v\n%s", c, out.String())
	}
}
