package capacity

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestReplay places txs by hand on short chains: slots of 1 s, a CertRB
// at a gap of 2 slots or more, EBs of 2 txs, RB bodies of 1.
func TestReplay(t *testing.T) {
	m := Model{Params: Params{SlotLengthMs: 1000, MinCertGap: 2}, EBTxs: 2, RBTxs: 1}
	at := func(ms ...int) []Offer {
		var o []Offer
		for _, x := range ms {
			o = append(o, Offer{At: time.Duration(x) * time.Millisecond, Counted: true})
		}
		return o
	}
	for _, tc := range []struct {
		name     string
		rbs      []uint64
		offers   []Offer
		want     Replay
		anyPlace bool
	}{{
		// RB 1 carries the first in its body and announces the other two;
		// RB 2 comes too early to certify them and carries the second; RB
		// 5 certifies the third, announced again by RB 2.
		name: "too early, then certified", rbs: []uint64{1, 2, 5}, offers: at(500, 600, 700),
		want: Replay{Txs: 3, P50Ms: 1400, P95Ms: 4300}, anyPlace: true,
	}, {
		// RB 1 carries the first and announces the next two; RB 3
		// certifies them and carries nothing else; the tx offered at 2.5 s
		// waits in RB 3's EB, never certified.
		name: "certified, then waiting", rbs: []uint64{1, 3}, offers: at(100, 200, 300, 2500),
		want: Replay{Txs: 3, Waiting: 1, P50Ms: 2700, P95Ms: 2800}, anyPlace: true,
	}, {
		name: "offered in any order", rbs: []uint64{1, 3}, offers: at(2500, 300, 100, 200),
		want: Replay{Txs: 3, Waiting: 1, P50Ms: 2700, P95Ms: 2800}, anyPlace: true,
	}, {
		// A tx offered at an RB's slot start misses that RB.
		name: "offered at a slot start", rbs: []uint64{1, 2}, offers: at(1000),
		want: Replay{Txs: 1, P50Ms: 1000, P95Ms: 1000}, anyPlace: true,
	}, {
		name: "uncounted txs queue but are not measured", rbs: []uint64{1, 2},
		offers: []Offer{{At: 100 * time.Millisecond}, {At: 200 * time.Millisecond, Counted: true}},
		want:   Replay{Txs: 1, P50Ms: 1800, P95Ms: 1800}, anyPlace: true,
	}, {
		name: "no RB", offers: at(100), want: Replay{Waiting: 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := m.Replay(tc.rbs, tc.offers)
			tc.want.Model = ReplayText
			if got != tc.want || ok != tc.anyPlace {
				t.Errorf("Replay = %+v, %v; want %+v, %v", got, ok, tc.want, tc.anyPlace)
			}
		})
	}
}

// TestReplayIsTheLatencyModelWithoutLimits: with no RB body and EBs that
// hold every waiting tx, an ideal network on a random leader schedule of
// the testnet template gives the latency model's figures, which assume
// exactly that.
func TestReplayIsTheLatencyModelWithoutLimits(t *testing.T) {
	p := template(t, "testnet.json")
	m := Model{Params: p, EBTxs: math.MaxInt, Latency: newLatencyModel(p)}
	rng := rand.New(rand.NewPCG(7, 7))
	const slots = 400_000
	var rbs []uint64
	for s := uint64(1); s <= slots; s++ {
		if rng.Float64() < p.ActiveSlotsCoeff {
			rbs = append(rbs, s)
		}
	}
	var offers []Offer
	for at := time.Duration(0); at < (slots-2_000)*p.SlotLength(); at += 1700 * time.Millisecond {
		offers = append(offers, Offer{At: at, Counted: true})
	}
	got, ok := m.Replay(rbs, offers)
	if !ok {
		t.Fatal("nothing placed")
	}
	for _, q := range []struct {
		name      string
		got, want int64
	}{{"p50", got.P50Ms, m.Latency.P50Ms}, {"p95", got.P95Ms, m.Latency.P95Ms}} {
		if math.Abs(float64(q.got-q.want)) > 0.04*float64(q.want) {
			t.Errorf("%s: replay %d ms, latency model %d ms", q.name, q.got, q.want)
		}
	}
	t.Logf("replay p50 %d ms p95 %d ms over %d txs; model %d, %d", got.P50Ms, got.P95Ms, got.Txs, m.Latency.P50Ms, m.Latency.P95Ms)
}
