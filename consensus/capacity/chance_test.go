package capacity

import (
	"math"
	"testing"
	"time"
)

// steady is a tx every interval from 0 to end, counted from countFrom on.
func steady(interval, countFrom, end time.Duration) []Offer {
	var o []Offer
	for at := time.Duration(0); at < end; at += interval {
		o = append(o, Offer{At: at, Counted: at >= countFrom})
	}
	return o
}

// chanceOver is m's chance over slots with the first 180 left out, a tx
// offered every 20 s.
func chanceOver(t *testing.T, m Model, slots uint64) (c Chance, from, to time.Duration) {
	t.Helper()
	slot := m.Params.SlotLength()
	from, to = 180*slot, time.Duration(slots)*slot
	c, ok := m.Chance(slots, from, to, steady(20*time.Second, from, to))
	if !ok {
		t.Fatal("no chain placed a tx")
	}
	return c, from, to
}

// TestChanceIsTheBinomialsSpread: on the testnet template the share of a
// span's RBs whose next RB came late enough is a binomial draw around
// p_cert, narrow over a long span and some 8 points either way over the
// dozen minutes a lab run measures.
func TestChanceIsTheBinomialsSpread(t *testing.T) {
	p := template(t, "testnet.json")
	m := Model{Params: p, EBTxs: math.MaxInt, Latency: newLatencyModel(p)}
	pCert := p.PCert()
	for _, tc := range []struct {
		name  string
		slots uint64
	}{{"12 minutes", 900}, {"a day", 86_400}} {
		t.Run(tc.name, func(t *testing.T) {
			c, from, to := chanceOver(t, m, tc.slots)
			rbs := float64(to-from) / float64(p.MeanRBInterval())
			sd := math.Sqrt(pCert * (1 - pCert) / rbs)
			lo, mid, hi := c.LateEnoughShare[0], c.LateEnoughShare[1], c.LateEnoughShare[2]
			if math.Abs(mid-pCert) > sd {
				t.Errorf("median share %.3f, p_cert %.3f (binomial sd %.3f)", mid, pCert, sd)
			}
			// The 5th to 95th percentile of a binomial spans 2 × 1.645 sd.
			if w := (hi - lo) / (2 * 1.645 * sd); w < 0.7 || w > 1.3 {
				t.Errorf("5th–95th percentile %.3f–%.3f spans %.2f× the binomial's", lo, hi, w)
			}
			t.Logf("%.0f RBs: shares %.3f / %.3f / %.3f (p_cert %.3f, sd %.3f); p95 %v ms", rbs, lo, mid, hi, pCert, sd, c.P95Ms)
		})
	}
}

// TestChanceOfTheLatencyModel: with no RB body and EBs that hold every
// waiting tx (the latency model's chain) the replay's p95 over a long
// span is the model's on every chain, and over a short one it scatters
// around it.
func TestChanceOfTheLatencyModel(t *testing.T) {
	p := template(t, "testnet.json")
	m := Model{Params: p, EBTxs: math.MaxInt, Latency: newLatencyModel(p)}
	slot := p.SlotLength()
	want := float64(m.Latency.P95Ms)
	long, ok := m.Chance(100_000, 0, 100_000*slot, steady(7*time.Second, 0, 99_000*slot))
	if !ok {
		t.Fatal("no chain placed a tx")
	}
	for i, got := range long.P95Ms {
		if math.Abs(float64(got)-want) > 0.05*want {
			t.Errorf("over 100,000 slots, percentile %d of the p95s is %d ms, the model's %d ms", i, got, m.Latency.P95Ms)
		}
	}
	short, _ := m.Chance(900, 180*slot, 900*slot, steady(time.Second, 180*slot, 900*slot))
	if lo, hi := float64(short.P95Ms[0]), float64(short.P95Ms[2]); !(lo < 0.9*want && hi > 1.1*want) {
		t.Errorf("over 900 slots the p95s' 5th–95th percentiles %v ms do not straddle the model's %d ms", short.P95Ms, m.Latency.P95Ms)
	}
	t.Logf("p95s over 900 slots %v ms, 100,000 slots %v ms; model %d ms", short.P95Ms, long.P95Ms, m.Latency.P95Ms)
}

// TestChanceIsAFunctionOfItsInputs: a fixed seed.
func TestChanceIsAFunctionOfItsInputs(t *testing.T) {
	p := template(t, "testnet.json")
	m := Model{Params: p, EBTxs: 100, RBTxs: 10}
	offers := steady(100*time.Millisecond, 60*time.Second, 600*time.Second)
	a, _ := m.Chance(600, time.Minute, 10*time.Minute, offers)
	b, _ := m.Chance(600, time.Minute, 10*time.Minute, offers)
	if a.P95Ms != b.P95Ms || a.LateEnoughShare != b.LateEnoughShare {
		t.Errorf("two runs differ: %v %v, %v %v", a.P95Ms, a.LateEnoughShare, b.P95Ms, b.LateEnoughShare)
	}
}

func TestRank(t *testing.T) {
	c := Chance{p95s: []float64{10, 20, 20, 30}}
	for _, tc := range []struct {
		ms   int64
		want float64
	}{{5, 0}, {10, 0.125}, {20, 0.5}, {25, 0.75}, {40, 1}} {
		if got := c.P95Rank(tc.ms); got != tc.want {
			t.Errorf("P95Rank(%d) = %g, want %g", tc.ms, got, tc.want)
		}
	}
}

// TestChanceThinned: the txs of a run at 0.8× the testnet's capacity of
// payments, thinned one in six with the blocks' room in txs, give what
// they give whole within a few per cent.
func TestChanceThinned(t *testing.T) {
	m, err := New(template(t, "testnet.json"), 195)
	if err != nil {
		t.Fatal(err)
	}
	from, to := 180*time.Second, 900*time.Second
	offers := steady(time.Second/346, from, to)
	whole, _ := m.chance(900, from, to, offers, len(offers))
	thinned, _ := m.chance(900, from, to, offers, len(offers)/6)
	for i := range whole.P95Ms {
		if w, th := float64(whole.P95Ms[i]), float64(thinned.P95Ms[i]); math.Abs(th-w) > 0.03*w {
			t.Errorf("percentile %d of the p95s: whole %v ms, thinned %v ms", i, w, th)
		}
	}
	if whole.LateEnoughShare != thinned.LateEnoughShare {
		t.Errorf("the chains differ: %v, %v", whole.LateEnoughShare, thinned.LateEnoughShare)
	}
	t.Logf("p95s whole %v ms, thinned %v ms", whole.P95Ms, thinned.P95Ms)
}

// TestChanceCeilingIsTheCapacitys: a chain's own ceiling — a full EB
// where an RB came late enough to certify one, else a full body — is on
// average the structural capacity: over a day every chain's is within a
// few per cent of it, and over the dozen minutes a lab run measures it
// scatters some twenty per cent either way: below 90 % of the capacity on
// about a chain in five, where no network carries 90 % of it.
func TestChanceCeilingIsTheCapacitys(t *testing.T) {
	p := template(t, "testnet.json")
	m, err := New(p, 195)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		slots         uint64
		spreadAtLeast float64 // the 5th–95th percentile's half-width, of the capacity
		spreadAtMost  float64
	}{{"12 minutes", 900, 0.08, 0.3}, {"a day", 86_400, 0, 0.05}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := chanceOver(t, m, tc.slots)
			lo, mid, hi := c.CeilingTxPerSecond[0]/m.TxPerSecond, c.CeilingTxPerSecond[1]/m.TxPerSecond, c.CeilingTxPerSecond[2]/m.TxPerSecond
			if math.Abs(mid-1) > max(tc.spreadAtLeast, 0.02) {
				t.Errorf("median ceiling %.3f of the capacity", mid)
			}
			if half := (hi - lo) / 2; half < tc.spreadAtLeast || half > tc.spreadAtMost {
				t.Errorf("5th–95th percentile %.3f–%.3f of the capacity", lo, hi)
			}
			if r := c.CeilingRank(c.CeilingTxPerSecond[1]); math.Abs(r-0.5) > 0.02 {
				t.Errorf("the median ceiling ranks at %.3f", r)
			}
			t.Logf("ceiling %.3f / %.3f / %.3f of the capacity; below 0.9 of it on %.0f %% of the chains", lo, mid, hi, 100*c.CeilingRank(0.9*m.TxPerSecond))
		})
	}
}
