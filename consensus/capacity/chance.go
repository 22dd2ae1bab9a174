package capacity

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// The chance's number of chains and seed: fixed, so a Chance is a function
// of its inputs.
const (
	chanceChains = 200
	chanceSeed   = 2
	// chanceOffers bounds the txs each chain replays: a devnet's ten
	// minutes offer millions.
	chanceOffers = 50_000
)

// ChanceText is Chance.Model.
const ChanceText = "the ideal network of the replay on random chains as long as the run's, each slot with an RB with " +
	"probability f, the run's own txs offered as they were admitted (thinned to one in k for at most 50,000, the blocks' room " +
	"in txs divided by k): the 5th, 50th and 95th percentiles over the chains " +
	"of the replay's p95, of the share of the span's RBs whose next RB came minCertGap slots or more after them and of the " +
	"chain's own ceiling (a full EB where an RB came late enough to certify one, else a full body, per second) — what " +
	"a run of this length measures by the leader schedule's chance alone, whatever the nodes do; the p95's spread speaks " +
	"for a run whose edges took what was offered: where they refused, the admissions followed the run's own chain, " +
	"bunched where its blocks cleared room, and on other chains they queue otherwise"

// Chance is how far a run's figures vary with its leader schedule alone
// (ChanceText): a run of 15 minutes sees some 45 RBs, and its p95 latency
// and certified share move with their gaps. Beside a run's figures it
// says whether they are the schedule's luck or the nodes'.
type Chance struct {
	Model  string `json:"model"`
	Chains int    `json:"chains"`
	Seed   uint64 `json:"seed"`
	// P95Ms is the replay's p95 latency, LateEnoughShare the share of
	// the span's RBs whose next RB may certify their EB: each the 5th,
	// 50th and 95th percentile over the chains.
	P95Ms           [3]int64   `json:"p95Ms"`
	LateEnoughShare [3]float64 `json:"lateEnoughShare"`
	// CeilingTxPerSecond is what each chain's own RBs in the span could
	// carry — a full EB where an RB came late enough to certify one, else
	// a full body — per second: the 5th, 50th and 95th percentile. Past
	// the capacity a run's on-chain rate is bounded by its chain's.
	CeilingTxPerSecond [3]float64 `json:"ceilingTxPerSecond"`

	p95s, shares, ceilings []float64 // sorted, one per chain that placed a counted tx
}

// Chance replays offers on random chains up to lastSlot and measures the
// share of RBs whose slot starts in [from, to) that a later RB could
// certify. It says false when no chain placed a counted tx.
func (m Model) Chance(lastSlot uint64, from, to time.Duration, offers []Offer) (Chance, bool) {
	return m.chance(lastSlot, from, to, offers, chanceOffers)
}

// chance is Chance with offers thinned to at most maxOffers.
func (m Model) chance(lastSlot uint64, from, to time.Duration, offers []Offer, maxOffers int) (Chance, bool) {
	ebTxs, rbTxs := m.EBTxs, m.RBTxs // the ceiling's, before the thinning
	offers = byOfferTime(offers)
	if k := (len(offers) + maxOffers - 1) / maxOffers; k > 1 {
		thinned := make([]Offer, 0, len(offers)/k+1)
		for i := 0; i < len(offers); i += k {
			thinned = append(thinned, offers[i])
		}
		offers = thinned
		m.EBTxs = max(1, int(math.Round(float64(m.EBTxs)/float64(k))))
		m.RBTxs = int(math.Round(float64(m.RBTxs) / float64(k)))
	}
	rng := rand.New(rand.NewPCG(chanceSeed, 0))
	slot, gap := m.Params.SlotLength(), uint64(max(m.Params.MinCertGap, 0))
	c := Chance{Model: ChanceText, Chains: chanceChains, Seed: chanceSeed}
	rbs := make([]uint64, 0, int(float64(lastSlot)*m.Params.ActiveSlotsCoeff*1.5))
	for range chanceChains {
		rbs = rbs[:0]
		for s := uint64(1); s <= lastSlot; s++ {
			if rng.Float64() < m.Params.ActiveSlotsCoeff {
				rbs = append(rbs, s)
			}
		}
		r, ok := m.replay(rbs, offers)
		if !ok {
			continue
		}
		c.p95s = append(c.p95s, float64(r.P95Ms))
		inSpan, lateEnough, ceiling := 0, 0, 0
		for i, s := range rbs {
			if at := time.Duration(s) * slot; at < from || at >= to {
				continue
			}
			if i > 0 && s-rbs[i-1] >= gap {
				ceiling += ebTxs // this RB may certify the EB before it
			} else {
				ceiling += rbTxs
			}
			if i+1 < len(rbs) {
				inSpan++
				if rbs[i+1]-s >= gap {
					lateEnough++
				}
			}
		}
		c.shares = append(c.shares, float64(lateEnough)/float64(max(inSpan, 1)))
		c.ceilings = append(c.ceilings, float64(ceiling)/(to-from).Seconds())
	}
	if len(c.p95s) == 0 {
		return c, false
	}
	slices.Sort(c.p95s)
	slices.Sort(c.shares)
	slices.Sort(c.ceilings)
	for i, q := range []float64{0.05, 0.5, 0.95} {
		c.P95Ms[i] = int64(percentile(c.p95s, q))
		c.LateEnoughShare[i] = percentile(c.shares, q)
		c.CeilingTxPerSecond[i] = percentile(c.ceilings, q)
	}
	return c, true
}

// P95s are the replay's p95 on each chain, in ms, ascending; Shares the
// share of the span's RBs whose next came late enough on each. Both are
// the run's alone: not in its report's JSON.
func (c Chance) P95s() []float64   { return slices.Clone(c.p95s) }
func (c Chance) Shares() []float64 { return slices.Clone(c.shares) }

// Ceilings are each chain's own ceiling in tx/s, ascending; the run's
// alone too.
func (c Chance) Ceilings() []float64 { return slices.Clone(c.ceilings) }

// P95Rank is the share of the chains whose replay's p95 is below ms: where
// a run's p95 falls among what the schedule alone gives.
func (c Chance) P95Rank(ms int64) float64 { return rank(c.p95s, float64(ms)) }

// ShareRank is the same for a share of RBs whose next RB came late enough.
func (c Chance) ShareRank(share float64) float64 { return rank(c.shares, share) }

// CeilingRank is the same for a chain's own ceiling in tx/s: also the
// share of the chains on which a network carrying all its chain could
// carry stays below txPerSecond.
func (c Chance) CeilingRank(txPerSecond float64) float64 { return rank(c.ceilings, txPerSecond) }

// rank is the share of sorted below x, counting ties as half.
func rank(sorted []float64, x float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	below, _ := slices.BinarySearch(sorted, x)
	atOrBelow := below
	for atOrBelow < len(sorted) && sorted[atOrBelow] == x {
		atOrBelow++
	}
	return (float64(below) + float64(atOrBelow-below)/2) / float64(len(sorted))
}

// percentile is the nearest-rank q-quantile of sorted, which is not empty.
func percentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
