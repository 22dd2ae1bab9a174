package capacity

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The latency Monte Carlo's size and seed: fixed, so a model is a function
// of its inputs.
const (
	latencyTxs  = 200_000
	latencySeed = 1
)

// LatencyModelText is LatencyModel.Model.
const LatencyModelText = "Monte Carlo of the chain alone at capacity (RB bodies full, so a tx rides EBs): RBs arrive per slot, " +
	"each slot with probability f, at their slot start; a tx submitted at a uniformly random time goes into the EB announced by " +
	"the first RB whose slot starts after it; the next RB certifies that EB when it comes minCertGap slots or more after it, " +
	"else the tx goes into the EB that next RB announces, and so on; the latency is from the submission to the start of the " +
	"slot of the certifying RB, as the measured latency is dated; no vote is missed, no fork, no queue behind earlier txs"

// LatencyModel is the submit-to-chain latency at capacity, by a Monte
// Carlo of the chain alone (LatencyModelText), beside its mean in closed
// form.
type LatencyModel struct {
	Model string `json:"model"`
	Txs   int    `json:"txs"`
	Seed  uint64 `json:"seed"`
	// MeanMs is the closed form: slot × (1/f − 1/2 + 1/(f × p_cert)),
	// the wait for the next RB, then a mean gap of 1/f slots for each of
	// the 1/p_cert announcements a tx rides on average.
	MeanMs int64 `json:"meanMs"`
	P50Ms  int64 `json:"p50Ms"`
	P95Ms  int64 `json:"p95Ms"`
}

// NewLatencyModel is the latency model of p alone, which the tx size plays
// no part in: for a warm-up, before any tx is sized.
func NewLatencyModel(p Params) (LatencyModel, error) {
	if err := p.check(); err != nil {
		return LatencyModel{}, err
	}
	return newLatencyModel(p), nil
}

// newLatencyModel runs the Monte Carlo for p, whose figures are valid.
func newLatencyModel(p Params) LatencyModel {
	ms := latencySamples(p)
	f, pCert := p.ActiveSlotsCoeff, p.PCert()
	m := LatencyModel{
		Model: LatencyModelText, Txs: latencyTxs, Seed: latencySeed,
		MeanMs: int64(float64(p.SlotLengthMs) * (1/f - 0.5 + 1/(f*pCert))),
	}
	m.P50Ms, m.P95Ms = medianAndP95(ms)
	return m
}

// medianAndP95 are the median and the nearest-rank 95th percentile of
// sorted, which is not empty.
func medianAndP95(sorted []int64) (p50, p95 int64) {
	n := len(sorted)
	return (sorted[(n-1)/2] + sorted[n/2]) / 2, sorted[int(math.Ceil(0.95*float64(n)))-1]
}

// latencySamples are the Monte Carlo's latencies in ms, sorted.
func latencySamples(p Params) []int64 {
	f, gap, slotMs := p.ActiveSlotsCoeff, max(p.MinCertGap, 0), float64(p.SlotLengthMs)
	rng := rand.New(rand.NewPCG(latencySeed, 0))
	// nextRB is the slots from one slot to the next slot with an RB: a
	// geometric draw, the count of Bernoulli(f) slots up to the first
	// success, by inversion.
	nextRB := func() int {
		if f >= 1 {
			return 1
		}
		return 1 + int(math.Log(1-rng.Float64())/math.Log1p(-f))
	}
	ms := make([]int64, latencyTxs)
	for i := range ms {
		// The tx comes at offset (in slots) into slot 0; the RB of slot 0,
		// if any, was forged at its start, before the tx.
		offset := rng.Float64()
		announced := nextRB()
		for {
			d := nextRB()
			if d >= gap {
				ms[i] = int64((float64(announced+d) - offset) * slotMs)
				break
			}
			announced += d
		}
	}
	slices.Sort(ms)
	return ms
}
