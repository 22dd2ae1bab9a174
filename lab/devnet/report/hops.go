package report

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/leiosnode/leiosnode/lab/load"
)

// HopClosures are the closures of the EBs of the measured span at the
// nodes a given number of links from the EB's producer, on a devnet whose
// links follow a topology: how an EB's closure time grows with the hops it
// crosses.
type HopClosures struct {
	// Hops is the fewest links between the producer and the node.
	Hops int `json:"hops"`
	// Pairs counts the (EB, node) pairs, Held those whose node held the
	// closure, Within those that held it within L_hdr + L_vote.
	Pairs  int `json:"pairs"`
	Held   int `json:"held"`
	Within int `json:"within"`
	// P50Ms and P95Ms are over the pairs held; absent without any.
	P50Ms *int64 `json:"p50Ms,omitempty"`
	P95Ms *int64 `json:"p95Ms,omitempty"`
}

// hopsMeasured says what ClosureTimes.ByHops measured.
const hopsMeasured = "the EBs whose slot started in the measured span, at every node but their producer (the node that held the closure first), " +
	"grouped by the fewest links between the two: from the EB's slot start to the node's complete closure"

// closuresByHops groups the closures of the EBs of span by their nodes'
// distance in links from the EB's producer (r.hops); nil without them.
func (r loadRun) closuresByHops(span load.Span, budgetMs int64) []HopClosures {
	names, hops := r.names, r.hops
	if len(hops) != len(names) {
		return nil
	}
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	held := map[int][]int64{}
	groups := map[int]*HopClosures{}
	for _, eb := range r.ebs {
		if !span.Contains(eb.Forged) || len(eb.ClosureMs) == 0 {
			continue
		}
		producer, first := -1, int64(0)
		for node, ms := range eb.ClosureMs {
			if i, ok := index[node]; ok && (producer < 0 || ms < first || (ms == first && i < producer)) {
				producer, first = i, ms
			}
		}
		if producer < 0 {
			continue
		}
		for i, node := range names {
			h := hops[producer][i]
			if i == producer || h < 0 {
				continue
			}
			g := groups[h]
			if g == nil {
				g = &HopClosures{Hops: h}
				groups[h] = g
			}
			g.Pairs++
			if ms, ok := eb.ClosureMs[node]; ok {
				g.Held++
				held[h] = append(held[h], ms)
				if ms <= budgetMs {
					g.Within++
				}
			}
		}
	}
	var out []HopClosures
	for _, h := range slices.Sorted(maps.Keys(groups)) {
		g := groups[h]
		if ms := held[h]; len(ms) > 0 {
			slices.Sort(ms)
			p50, p95 := medianOfSorted(ms), nearestRank(ms, 0.95)
			g.P50Ms, g.P95Ms = &p50, &p95
		}
		out = append(out, *g)
	}
	return out
}

// printHops prints the closures by hop count, one line per distance.
func printHops(out io.Writer, budgetMs int64, byHops []HopClosures) {
	for _, g := range byHops {
		line := fmt.Sprintf("    %d hop(s): %d (EB, node) pairs, %d held, %d within %d ms", g.Hops, g.Pairs, g.Held, g.Within, budgetMs)
		if g.P50Ms != nil {
			line += fmt.Sprintf("; p50 %d ms, p95 %d ms", *g.P50Ms, *g.P95Ms)
		}
		fmt.Fprintln(out, line)
	}
}
