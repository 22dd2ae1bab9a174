package report

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
	"github.com/leiosnode/leiosnode/lab/load"
)

// CapacityReport is the run beside its network's structural capacity
// (package capacity), at the mean size of the firehose's admitted txs:
// the chain's rate, the EBs certified and the latency over the measured
// span (load.CapacityCheck), and the EBs' closures at the voting nodes
// against L_hdr + L_vote.
type CapacityReport struct {
	load.CapacityCheck
	// Uncertified are the EBs of the span the chain could have certified
	// and did not; absent when there are none.
	Uncertified *Uncertified `json:"uncertified,omitempty"`
	// Closures are the closures of the EBs of the measured span; absent
	// without a span.
	Closures *ClosureTimes `json:"closures,omitempty"`
	// Problem says why there is no model.
	Problem string `json:"problem,omitempty"`
}

// ClosureTimes are, over the (EB, voting node) pairs of the EBs whose slot
// started in the measured span — a voting node being one with a vote
// outcome for the EB — the time from the EB's slot start to the node's
// complete closure, against BudgetMs: L_hdr + L_vote slots (the node's
// voting window closes one slot later).
type ClosureTimes struct {
	// Measured says what was measured, in words.
	Measured string `json:"measured"`
	BudgetMs int64  `json:"budgetMs"`
	// Pairs counts the pairs, Held those whose node held the closure,
	// Within those that held it within the budget; WithinShare is Within
	// over Pairs.
	Pairs       int     `json:"pairs"`
	Held        int     `json:"held"`
	Within      int     `json:"within"`
	WithinShare float64 `json:"withinShare"`
	// P50Ms and P95Ms are over the pairs that held the closure; absent
	// without any.
	P50Ms *int64 `json:"p50Ms,omitempty"`
	P95Ms *int64 `json:"p95Ms,omitempty"`
	// ByHops are the same closures at every node, by its distance in links
	// from the EB's producer, when the devnet's links follow a topology.
	ByHopsMeasured string        `json:"byHopsMeasured,omitempty"`
	ByHops         []HopClosures `json:"byHops,omitempty"`
}

// closuresMeasured is ClosureTimes.Measured.
const closuresMeasured = "the EBs whose slot started in the measured span, each with every node that has a vote outcome for it: " +
	"from the EB's slot start to the node's complete closure (its GET /api/ebs), against L_hdr + L_vote slots; " +
	"within: over all the pairs, a closure never held counting as late; p50 and p95 over the pairs whose node held it"

// capacitySpanIs says what the devnet's measured span is.
const capacitySpanIs = "from the system start plus the warm-up to the firehose's stop"

// newCapacityReport is the capacity section of a run of g whose firehose
// admitted txs (its report txs, which has their mean size and the
// latency), over span (nil: none).
func newCapacityReport(g *consensus.Genesis, r loadRun, span *load.Span, txs *load.Report) *CapacityReport {
	params, err := capacity.FromGenesis(g)
	if err != nil {
		return &CapacityReport{Problem: err.Error()}
	}
	model, err := capacity.New(params, txs.MeanTxBytes)
	if err != nil {
		return &CapacityReport{Problem: err.Error()}
	}
	c := &CapacityReport{CapacityCheck: *load.CheckCapacity(model, r.common, r.clock, span, capacitySpanIs, txs.LatencyInSpan, txs.Offers)}
	c.Uncertified = r.uncertified(span, params.MinCertGap)
	if span != nil {
		c.Closures = r.closureTimes(*span, params.ClosureBudget())
		if c.Closures.ByHops = r.closuresByHops(*span, c.Closures.BudgetMs); c.Closures.ByHops != nil {
			c.Closures.ByHopsMeasured = hopsMeasured
		}
	}
	return c
}

// closureTimes are the closures of the EBs whose slot started in span at
// their voting nodes, against budget.
func (r loadRun) closureTimes(span load.Span, budget time.Duration) *ClosureTimes {
	c := &ClosureTimes{Measured: closuresMeasured, BudgetMs: budget.Milliseconds()}
	var held []int64
	for _, eb := range r.ebs {
		if !span.Contains(eb.Forged) {
			continue
		}
		for node := range eb.Votes {
			c.Pairs++
			ms, ok := eb.ClosureMs[node]
			if !ok {
				continue
			}
			held = append(held, ms)
			if ms <= c.BudgetMs {
				c.Within++
			}
		}
	}
	c.Held = len(held)
	if c.Pairs > 0 {
		c.WithinShare = float64(c.Within) / float64(c.Pairs)
	}
	if len(held) > 0 {
		slices.Sort(held)
		p50, p95 := medianOfSorted(held), nearestRank(held, 0.95)
		c.P50Ms, c.P95Ms = &p50, &p95
	}
	return c
}

// printCapacity prints the capacity section: the model, what was measured
// beside it, and the closures against their budget.
func printCapacity(out io.Writer, c *CapacityReport) {
	if c.Problem != "" {
		fmt.Fprintf(out, "the network's capacity not modelled: %s\n", c.Problem)
		return
	}
	c.CapacityCheck.Print(out)
	if u := c.Uncertified; u != nil {
		u.print(out)
	}
	cl := c.Closures
	switch {
	case cl == nil:
	case cl.Pairs == 0:
		fmt.Fprintf(out, "  EB closures at the voting nodes: no EB of the span has a vote outcome (L_hdr + L_vote = %d ms)\n", cl.BudgetMs)
	case cl.P50Ms == nil:
		fmt.Fprintf(out, "  EB closures within L_hdr + L_vote = %d ms of the slot start: 0 of %d (EB, voting node) pairs; no voting node held a closure\n", cl.BudgetMs, cl.Pairs)
	default:
		fmt.Fprintf(out, "  EB closures within L_hdr + L_vote = %d ms of the slot start: %.0f %% of %d (EB, voting node) pairs of the span; of the %d held, p50 %d ms, p95 %d ms\n",
			cl.BudgetMs, 100*cl.WithinShare, cl.Pairs, cl.Held, *cl.P50Ms, *cl.P95Ms)
	}
	if cl != nil && len(cl.ByHops) > 0 {
		fmt.Fprintln(out, "  EB closures by links from the EB's producer, at every node:")
		printHops(out, cl.BudgetMs, cl.ByHops)
	}
}
