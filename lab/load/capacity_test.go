package load

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
)

// devnetModel is the capacity model of the devnet template at 200 B a tx.
func devnetModel(t *testing.T) capacity.Model {
	t.Helper()
	m, err := capacity.New(capacity.NewParams(100*time.Millisecond, 0.1, consensus.DefaultLeiosParams()), 200)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCheckCapacity: over a span of 30 s (slots 100 to 400 of 100 ms),
// the chain's rate counts the blocks whose slot started in it, their own
// txs and certified closures; an EB's fate is known once a block follows
// its RB: certified by the next, too early when the next came within 10
// slots, neither otherwise. The ideal network is offered the run's txs on
// the chain's own RBs: the tx of the span admitted at 10.05 s, after RB
// 100 announced an empty EB, goes into RB 115's body.
func TestCheckCapacity(t *testing.T) {
	clock := consensus.Clock{Start: time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC), SlotLength: 100 * time.Millisecond}
	eb := func(slot uint64) *apitypes.EBRef { return &apitypes.EBRef{Slot: slot, EbHash: "eb"} }
	common := []apitypes.BlockTxs{
		{Slot: 50, Txs: make([]string, 10), Announces: eb(50)},                             // before the span
		{Slot: 100, Txs: make([]string, 100), Announces: eb(100)},                          // certified by the next
		{Slot: 115, Certifies: eb(100), Closure: make([]string, 1000), Announces: eb(115)}, // the next too early
		{Slot: 120, Txs: make([]string, 90), Announces: eb(120)},                           // the next late enough, no certificate
		{Slot: 140, Txs: make([]string, 80), Announces: eb(140)},                           // certified
		{Slot: 160, Certifies: eb(140), Closure: make([]string, 500), Announces: eb(160)},  // certified
		{Slot: 390, Certifies: eb(160), Closure: make([]string, 300), Announces: eb(390)},  // fate unknown
	}
	span := Span{From: clock.SlotStart(100), To: clock.SlotStart(400)}
	latency := &Latency{Txs: 7, P50Ms: 3000, P95Ms: 7000}
	offers := []capacity.Offer{{At: time.Second}, {At: 10050 * time.Millisecond, Counted: true}}
	ideal := &capacity.Replay{Model: capacity.ReplayText, Txs: 1, P50Ms: 1450, P95Ms: 1450}
	m := devnetModel(t)
	for _, tc := range []struct {
		name      string
		common    []apitypes.BlockTxs
		txPerS    float64
		fateKnown int
		certified int
		tooEarly  int
		ideal     *capacity.Replay
	}{
		{"the chain", common, 2070.0 / 30, 5, 3, 1, ideal},
		{"no chain", nil, 0, 0, 0, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := CheckCapacity(m, tc.common, clock, &span, "the test's", latency, offers)
			checkFormatted(t, &Report{Capacity: check})
			c := check.Chain
			if !strings.Contains(check.Measured, "(the test's)") {
				t.Errorf("measured %q", check.Measured)
			}
			if c.FromS != 10 || c.ToS != 40 || c.Latency != latency {
				t.Errorf("span %v–%v s, latency %+v", c.FromS, c.ToS, c.Latency)
			}
			if !near(c.OnChainTxPerSecond, tc.txPerS) || !near(c.OnChainTxkBPerSecond, tc.txPerS*0.2) || !near(c.CapacityShare, tc.txPerS/m.TxPerSecond) {
				t.Errorf("on chain %v tx/s, %v TxkB/s, %v of the capacity; want %v tx/s", c.OnChainTxPerSecond, c.OnChainTxkBPerSecond, c.CapacityShare, tc.txPerS)
			}
			// Blocks 100, 115, 140, 160 and 390 came 10 slots or more after
			// the one before: an EB's closure each; 120 an RB body.
			if tc.fateKnown > 0 && (!near(c.ChainCeilingTxPerSecond, float64(5*m.EBTxs+m.RBTxs)/30) || !near(c.CeilingShare, tc.txPerS/c.ChainCeilingTxPerSecond)) {
				t.Errorf("this chain's ceiling %v tx/s, %v of it; want 5 EBs and a body over 30 s", c.ChainCeilingTxPerSecond, c.CeilingShare)
			}
			if c.EBsFateKnown != tc.fateKnown || c.EBsCertified != tc.certified || c.EBsNextTooEarly != tc.tooEarly {
				t.Errorf("EBs: %d of known fate, %d certified, %d too early; want %d, %d, %d",
					c.EBsFateKnown, c.EBsCertified, c.EBsNextTooEarly, tc.fateKnown, tc.certified, tc.tooEarly)
			}
			if tc.fateKnown > 0 && (!near(c.CertifiedShare, float64(tc.certified)/float64(tc.fateKnown)) || !near(c.NextTooEarlyShare, float64(tc.tooEarly)/float64(tc.fateKnown))) {
				t.Errorf("shares: certified %v, too early %v", c.CertifiedShare, c.NextTooEarlyShare)
			}
			if (c.Ideal == nil) != (tc.ideal == nil) || c.Ideal != nil && *c.Ideal != *tc.ideal {
				t.Errorf("ideal %+v, want %+v", c.Ideal, tc.ideal)
			}
			if (c.Chance == nil) != (tc.ideal == nil) || c.Chance != nil && c.Chance.Chains == 0 {
				t.Errorf("chance %+v beside the ideal %+v", c.Chance, c.Ideal)
			}
		})
	}
}

// TestCapacityPrinted: the report's lines give the model, then what was
// measured beside it, saying what it is.
func TestCapacityPrinted(t *testing.T) {
	m := devnetModel(t)
	chance, ok := m.Chance(400, 10*time.Second, 40*time.Second, []capacity.Offer{{At: 15 * time.Second, Counted: true}})
	if !ok {
		t.Fatal("no chance")
	}
	c := &CapacityCheck{Model: m, Chain: &ChainFigures{
		FromS: 10, ToS: 40, OnChainTxPerSecond: 69, OnChainTxkBPerSecond: 13.8, CapacityShare: 69 / m.TxPerSecond,
		ChainCeilingTxPerSecond: 100, CeilingShare: 0.69,
		EBsFateKnown: 5, EBsCertified: 3, CertifiedShare: 0.6, EBsNextTooEarly: 1, NextTooEarlyShare: 0.2,
		Latency: &Latency{Txs: 7, P50Ms: 3000, P95Ms: 7000},
		Ideal:   &capacity.Replay{Txs: 6, Waiting: 1, P50Ms: 2500, P95Ms: 5000},
		Chance:  &chance,
	}}
	var out bytes.Buffer
	(&Report{Capacity: c}).Print(&out)
	for _, want := range []string{
		"structural capacity 5,484 tx/s (1,097 TxkB/s) at 200 B/tx",
		"  measured 10–40 s after the system start: on chain 69.0 tx/s (13.8 TxkB/s at the firehose's mean 200 B/tx) = 1 % of the capacity; " +
			"this chain's own RBs could carry 100.0 tx/s (a full EB where the RB came late enough to certify one, else a full body): 69 % of that\n",
		"  EBs certified 3 of 5 whose fate is known (60 %, p_cert 39 %); next RB too early 1 (20 %, 1 − p_cert 61 %); of the 4 whose next RB came late enough, 3 certified (75 %)\n",
		"  submit to chain p50 3.00 s, p95 7.00 s over 7 txs first sent in the span; the model's p50 3.21 s, p95 6.63 s\n",
		"  an ideal network on this chain's RBs, the same txs offered when admitted: p50 2.50 s, p95 5.00 s over 6 txs (1 still waiting at its last RB); measured p95 1.40× the ideal's\n",
		// One tx at 15 s, p95 7 s measured, 60 % certified, a ceiling of 100
		// tx/s: by chance alone an RB comes within 0.1–3 s; 200 chains, a
		// fixed seed.
		"  by the leader schedule's chance alone (an ideal network on 200 random chains as long as this one, the same txs): " +
			"p95 0.10 s / 0.70 s / 3.00 s at the 5th / 50th / 95th percentile, the measured p95 at the 100th; " +
			"RBs whose next came late enough 25 / 39 / 57 %, the measured certified share at the 98th; " +
			"the chain's own ceiling 4,273 / 5,587 / 6,932 tx/s, this one's at the 0th, below 90 % of the capacity on 25 % of the chains\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the lines lack %q:\n%s", want, out.String())
		}
	}

	// Without a span, the model alone, and why.
	out.Reset()
	CheckCapacity(m, nil, consensus.Clock{}, nil, "none", nil, nil).Print(&out)
	if got := out.String(); !strings.Contains(got, "structural capacity") || !strings.Contains(got, "nothing measured beside it: the run did not outlast its warm-up") {
		t.Errorf("without a span:\n%s", got)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestPercentileName(t *testing.T) {
	for rank, want := range map[float64]string{0: "0th", 0.01: "1st", 0.02: "2nd", 0.03: "3rd", 0.11: "11th", 0.12: "12th", 0.13: "13th", 0.21: "21st", 0.63: "63rd", 0.98: "98th", 1: "100th"} {
		if got := percentileName(rank); got != want {
			t.Errorf("rank %v: %s, want %s", rank, got, want)
		}
	}
}
