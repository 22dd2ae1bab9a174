package load

import (
	"fmt"
	"io"
	"math"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
)

// CapacityMeasured is CapacityCheck.Measured; %s says what the span is.
const CapacityMeasured = "over the measured span (%s): on chain: the txs of the common chain's blocks whose slot started in it " +
	"(their own and the closures they certified) per second, in kB (1,000 bytes) at the firehose's mean admitted tx size, " +
	"and as a share of the structural capacity at that size, and of this chain's own ceiling (each of its RBs in the span " +
	"counted as a full EB's closure where it came minCertGap slots or more after the RB before it, else a full body); certified: the EBs the common chain announced in it whose fate " +
	"is known (a block follows their RB) that the next block certified, against p_cert; too early: those whose next block " +
	"came within minCertGap slots, against 1 − p_cert; latency: the firehose's txs first sent in it that are on every chain, " +
	"from the admitted POST to the start of the slot of the block that applied it, against the model's, dated the same way " +
	"(the model assumes the load at capacity: below it a tx may go into the next RB's body and wait less), and against an " +
	"ideal network's on the run's own chain and txs (capacity.ReplayText); chance: the same on random chains as long " +
	"(capacity.ChanceText)"

// CapacityCheck is a run measured beside its network's structural
// capacity (package capacity), over its measured span.
type CapacityCheck struct {
	// Measured says what was measured, in words.
	Measured string         `json:"measured"`
	Model    capacity.Model `json:"model"`
	// Chain is what the chain carried over the measured span; absent when
	// the run had none (it did not outlast its warm-up).
	Chain *ChainFigures `json:"chain,omitempty"`
}

// ChainFigures are what a run's chain carried over its measured span, as
// CapacityMeasured says.
type ChainFigures struct {
	// FromS and ToS bound the span, in seconds from the system start.
	FromS float64 `json:"fromS"`
	ToS   float64 `json:"toS"`
	// OnChainTxPerSecond and OnChainTxkBPerSecond are the chain's rate,
	// CapacityShare its share of the model's.
	OnChainTxPerSecond   float64 `json:"onChainTxPerSecond"`
	OnChainTxkBPerSecond float64 `json:"onChainTxkBPerSecond"`
	CapacityShare        float64 `json:"capacityShare"`
	// ChainCeilingTxPerSecond is what this chain's own RBs could have put
	// on chain over the span: each a full EB's closure where it came
	// minCertGap slots or more after the RB before it, else a full body —
	// the capacity with the leader schedule's luck taken as it came;
	// CeilingShare the chain's rate over it.
	ChainCeilingTxPerSecond float64 `json:"chainCeilingTxPerSecond"`
	CeilingShare            float64 `json:"ceilingShare"`
	// EBsFateKnown counts the EBs announced in the span with a block
	// after their RB; EBsCertified those the next block certified and
	// EBsNextTooEarly those whose next block came within minCertGap slots;
	// CertifiedShare and NextTooEarlyShare their shares.
	EBsFateKnown      int     `json:"ebsFateKnown"`
	EBsCertified      int     `json:"ebsCertified"`
	CertifiedShare    float64 `json:"certifiedShare"`
	EBsNextTooEarly   int     `json:"ebsNextTooEarly"`
	NextTooEarlyShare float64 `json:"nextTooEarlyShare"`
	// Latency is the firehose's over the span; absent without any tx.
	Latency *Latency `json:"latency,omitempty"`
	// Ideal is the latency an ideal network gives the same txs, offered
	// when they were admitted, on the same chain's RBs: what of Latency is
	// the chain's and its queue's, not the nodes'. Absent when it placed
	// no tx of the span.
	Ideal *capacity.Replay `json:"ideal,omitempty"`
	// Chance is how far the latency and the certified share of a run this
	// long move with the leader schedule alone; absent when Ideal is.
	Chance *capacity.Chance `json:"chance,omitempty"`
}

// CheckCapacity measures common, the blocks every node's chain holds, over
// span beside model: nothing when span is nil. clock dates the blocks,
// spanIs says what the span is, latency is the firehose's over it (nil:
// none) and offers its admitted txs, those first sent in the span counted.
func CheckCapacity(model capacity.Model, common []apitypes.BlockTxs, clock consensus.Clock, span *Span, spanIs string, latency *Latency, offers []capacity.Offer) *CapacityCheck {
	c := &CapacityCheck{Measured: fmt.Sprintf(CapacityMeasured, spanIs), Model: model}
	if span == nil {
		return c
	}
	f := &ChainFigures{FromS: span.From.Sub(clock.Start).Seconds(), ToS: span.To.Sub(clock.Start).Seconds(), Latency: latency}
	c.Chain = f
	txs, ceiling := 0, 0
	gap := uint64(max(model.Params.MinCertGap, 0))
	for i, b := range common {
		if !span.Contains(clock.SlotStart(b.Slot)) {
			continue
		}
		txs += len(b.Txs) + len(b.Closure)
		if i > 0 && b.Slot-common[i-1].Slot >= gap {
			ceiling += model.EBTxs
		} else {
			ceiling += model.RBTxs
		}
		if b.Announces == nil || i+1 == len(common) {
			continue // no EB, or its fate is not known yet
		}
		f.EBsFateKnown++
		next := common[i+1]
		switch {
		case next.Certifies != nil && *next.Certifies == *b.Announces:
			f.EBsCertified++
		case next.Slot-b.Slot < gap:
			f.EBsNextTooEarly++
		}
	}
	if s := span.Seconds(); s > 0 {
		f.OnChainTxPerSecond = float64(txs) / s
		f.OnChainTxkBPerSecond = f.OnChainTxPerSecond * model.MeanTxBytes / 1000
		f.ChainCeilingTxPerSecond = float64(ceiling) / s
	}
	if f.ChainCeilingTxPerSecond > 0 {
		f.CeilingShare = f.OnChainTxPerSecond / f.ChainCeilingTxPerSecond
	}
	if model.TxPerSecond > 0 {
		f.CapacityShare = f.OnChainTxPerSecond / model.TxPerSecond
	}
	if f.EBsFateKnown > 0 {
		f.CertifiedShare = float64(f.EBsCertified) / float64(f.EBsFateKnown)
		f.NextTooEarlyShare = float64(f.EBsNextTooEarly) / float64(f.EBsFateKnown)
	}
	rbSlots := make([]uint64, len(common))
	for i, b := range common {
		rbSlots[i] = b.Slot
	}
	if ideal, ok := model.Replay(rbSlots, offers); ok {
		f.Ideal = &ideal
		if chance, ok := model.Chance(rbSlots[len(rbSlots)-1], span.From.Sub(clock.Start), span.To.Sub(clock.Start), offers); ok {
			f.Chance = &chance
		}
	}
	return c
}

// Print writes the check's lines: the model, then what was measured
// beside it.
func (c *CapacityCheck) Print(out io.Writer) {
	m := c.Model
	fmt.Fprintf(out, "%s\n", m)
	f := c.Chain
	if f == nil {
		fmt.Fprintln(out, "  nothing measured beside it: the run did not outlast its warm-up")
		return
	}
	fmt.Fprintf(out, "  measured %.0f–%.0f s after the system start: on chain %.1f tx/s (%.1f TxkB/s at the firehose's mean %.0f B/tx) = %.0f %% of the capacity; "+
		"this chain's own RBs could carry %.1f tx/s (a full EB where the RB came late enough to certify one, else a full body): %.0f %% of that\n",
		f.FromS, f.ToS, f.OnChainTxPerSecond, f.OnChainTxkBPerSecond, m.MeanTxBytes, 100*f.CapacityShare, f.ChainCeilingTxPerSecond, 100*f.CeilingShare)
	fmt.Fprintf(out, "  EBs certified %d of %d whose fate is known (%.0f %%, p_cert %.0f %%); next RB too early %d (%.0f %%, 1 − p_cert %.0f %%)",
		f.EBsCertified, f.EBsFateKnown, 100*f.CertifiedShare, 100*m.PCert, f.EBsNextTooEarly, 100*f.NextTooEarlyShare, 100*(1-m.PCert))
	if late := f.EBsFateKnown - f.EBsNextTooEarly; late > 0 {
		fmt.Fprintf(out, "; of the %d whose next RB came late enough, %d certified (%.0f %%)", late, f.EBsCertified, 100*float64(f.EBsCertified)/float64(late))
	}
	fmt.Fprintln(out)
	if l := f.Latency; l != nil {
		fmt.Fprintf(out, "  submit to chain p50 %s, p95 %s over %d txs first sent in the span; the model's p50 %s, p95 %s\n",
			Seconds(l.P50Ms), Seconds(l.P95Ms), l.Txs, Seconds(m.Latency.P50Ms), Seconds(m.Latency.P95Ms))
		if i := f.Ideal; i != nil {
			fmt.Fprintf(out, "  an ideal network on this chain's RBs, the same txs offered when admitted: p50 %s, p95 %s over %d txs (%d still waiting at its last RB); measured p95 %.2f× the ideal's\n",
				Seconds(i.P50Ms), Seconds(i.P95Ms), i.Txs, i.Waiting, float64(l.P95Ms)/float64(max(i.P95Ms, 1)))
		}
		if c := f.Chance; c != nil {
			fmt.Fprintf(out, "  by the leader schedule's chance alone (an ideal network on %d random chains as long as this one, the same txs): "+
				"p95 %s / %s / %s at the 5th / 50th / 95th percentile, the measured p95 at the %s; "+
				"RBs whose next came late enough %.0f / %.0f / %.0f %%, the measured certified share at the %s; "+
				"the chain's own ceiling %s / %s / %s tx/s, this one's at the %s, below 90 %% of the capacity on %.0f %% of the chains\n",
				c.Chains, Seconds(c.P95Ms[0]), Seconds(c.P95Ms[1]), Seconds(c.P95Ms[2]), percentileName(c.P95Rank(l.P95Ms)),
				100*c.LateEnoughShare[0], 100*c.LateEnoughShare[1], 100*c.LateEnoughShare[2], percentileName(c.ShareRank(f.CertifiedShare)),
				capacity.Thousands(c.CeilingTxPerSecond[0]), capacity.Thousands(c.CeilingTxPerSecond[1]), capacity.Thousands(c.CeilingTxPerSecond[2]), percentileName(c.CeilingRank(f.ChainCeilingTxPerSecond)),
				100*c.CeilingRank(0.9*m.TxPerSecond))
		}
	} else {
		fmt.Fprintf(out, "  submit to chain: no tx first sent in the span is on every chain; the model's p50 %s, p95 %s\n",
			Seconds(m.Latency.P50Ms), Seconds(m.Latency.P95Ms))
	}
}

// percentileName names the percentile of a rank in [0, 1]: "63rd".
func percentileName(rank float64) string {
	n := int(math.Round(100 * rank))
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
