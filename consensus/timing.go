package consensus

import (
	"math"
	"time"
)

// Timing is the protocol's time, derived from a genesis: every threshold
// and timer of the node that depends on how fast the chain moves is one of
// these, so that nothing is tuned to one network's slot length
// (ARCHITECTURE.md, "Protocol time" lists who uses which).
type Timing struct {
	// SlotLength is the genesis slot length.
	SlotLength time.Duration
	// F is the active slot coefficient as a float: the chance that some
	// pool leads a slot (all stake together leads with probability f).
	F float64
	// Leios are the genesis's Leios parameters, in slots.
	Leios LeiosParams
}

// Timing returns the genesis's protocol time. The genesis must have
// passed Check.
func (g *Genesis) Timing() Timing {
	f, err := g.ActiveSlots()
	t := Timing{SlotLength: g.SlotLength(), Leios: g.Leios}
	if err == nil {
		t.F, _ = f.Float64()
	}
	return t
}

// Timing is the validator's genesis's protocol time.
func (v *Validator) Timing() Timing {
	f, _ := v.f.Float64()
	return Timing{SlotLength: v.clock.SlotLength, F: f, Leios: v.leios}
}

// Slots is n slots as a duration.
func (t Timing) Slots(n uint64) time.Duration { return time.Duration(n) * t.SlotLength }

// MeanRBInterval is the mean time between ranking blocks: one slot in 1/f
// has a leader.
func (t Timing) MeanRBInterval() time.Duration {
	if t.F <= 0 {
		return t.SlotLength
	}
	return time.Duration(float64(t.SlotLength) / t.F)
}

// CertProbability is p_cert, the chance that the RB after an EB's RB comes
// at least MinCertGap slots after it, so that it may certify the EB: the
// gap d between consecutive RBs is geometric, P(d ≥ g) = (1−f)^(g−1).
func (t Timing) CertProbability() float64 {
	if t.Leios.MinCertGap <= 1 {
		return 1
	}
	return math.Pow(1-t.F, float64(t.Leios.MinCertGap-1))
}

// QuietSlots is how many slots in a row a healthy chain goes without a
// block with probability at most p: ⌈ln p / ln(1−f)⌉. A tip further
// behind the clock says the node is not following the chain.
func (t Timing) QuietSlots(p float64) uint64 {
	if t.F <= 0 || t.F >= 1 || p <= 0 || p >= 1 {
		return 1
	}
	return uint64(math.Ceil(math.Log(p) / math.Log(1-t.F)))
}

// SyncLagSlots is how far the selected tip may lag the clock before the
// node counts as syncing: further than a healthy chain goes without a
// block but once in 10,000 (88 slots at f 0.1, 180 at f 0.05).
func (t Timing) SyncLagSlots() uint64 { return t.QuietSlots(1e-4) }

// VotingWindow is the time from an EB's slot to the end of its voting
// window: L_hdr + L_vote slots, and the slot itself.
func (t Timing) VotingWindow() time.Duration { return t.Slots(t.VotingWindowSlots()) }

// VotingWindowSlots is VotingWindow in slots: L_hdr + L_vote + 1.
func (t Timing) VotingWindowSlots() uint64 { return uint64(t.Leios.LHdr + t.Leios.LVote + 1) }

// BacklogEBs is how many blocks' worth of txs — full EBs by count, RB
// bodies and EB closures by bytes — a node's edge lets its mempool hold:
// the chain clears about one per certified RB, so a tx behind that many
// waits about BacklogEBs/p_cert RB intervals for its own EB to come up —
// the inclusion bound. Three make that bound about the structural p95
// latency (115 s at the CIP's timing against the model's 105–109 s): a
// tx admitted past capacity waits about what one waits on a bad day of a
// chain that is not loaded. Four let it wait past twice that on a chain
// slower than the mean (237 s on ten pools at three times the capacity).
const BacklogEBs = 3

// MempoolBlocks is how many blocks' worth of bytes a node's mempool
// holds: the edge's backlog and one more, so that txs from peers, which
// the edge does not refuse, still find room while it refuses local ones.
const MempoolBlocks = BacklogEBs + 1

// InclusionBound is how long the oldest tx a node holds may have waited
// while the chain still takes txs as fast as they come. The oldest tx goes
// into the next EB; it is on chain once an EB is certified, which takes a
// geometric number of RBs of mean 1/p_cert. One RB interval to the first
// EB, then BacklogEBs/p_cert intervals (3/p_cert RBs pass without a
// certification with probability about e⁻³, 5 %): a longer wait says the
// backlog grows.
// 8.7 s at the devnet's timing (100 ms slots, f 0.1), 115 s at the CIP's
// (1 s slots, f 0.05).
func (t Timing) InclusionBound() time.Duration {
	return time.Duration(float64(t.MeanRBInterval()) * (1 + BacklogEBs/t.CertProbability()))
}

// VerdictHorizon is how long a verdict on an EB's voting window speaks
// for the node's lag: four mean RB intervals, in which a node under load
// sees about four EBs. Past it with no newer EB judged, no EB came to show
// the node still behind, and a refusal that rests on old verdicts would
// wait for EBs its own refusal keeps from being made.
func (t Timing) VerdictHorizon() time.Duration { return 4 * t.MeanRBInterval() }

// HedgeAfter is how long a fetch may be outstanding before the item is
// also asked of another peer: two fifths of the voting window, so the
// second try still has the rest of it (2.4 s at the CIP's timing, 240 ms
// at the devnet's).
func (t Timing) HedgeAfter() time.Duration { return t.VotingWindow() * 2 / 5 }
