package report

import (
	"cmp"
	"fmt"
	"github.com/leiosnode/leiosnode/lab/load"
	"maps"
	"slices"
)

// CPUReport is what the nodes' CPU went on: per node, its CPU per 1,000
// txs reaching its chain over the measured span, beside the floor measured
// in the same run; and, over the timeline, what took the CPU in the
// windows in which most voters missed their voting windows.
type CPUReport struct {
	// Measured says what was measured, in words.
	Measured string    `json:"measured"`
	Nodes    []NodeCPU `json:"nodes"`
	// MeanSecondsPerKTx is the mean of the nodes' SecondsPerKTx; 0 when no
	// node has one.
	MeanSecondsPerKTx float64 `json:"meanSecondsPerKTx"`
	// Floor is the least CPU a tx can cost, measured after the nodes
	// stopped; FloorProblem says why it is absent.
	Floor        *CPUFloor `json:"floor,omitempty"`
	FloorProblem string    `json:"floorProblem,omitempty"`
	// RatioToFloor is MeanSecondsPerKTx over the floor; 0 without either.
	RatioToFloor float64 `json:"ratioToFloor"`
	// WhenMissed compares the windows of the timeline in which most voters
	// missed their voting windows with the others.
	WhenMissed CPUWhenMissed `json:"whenMissed"`
	// Generator is the load generator's own CPU over the span, beside the
	// nodes'; absent without a firehose, a CPU clock or a span.
	Generator *GeneratorCPU `json:"generator,omitempty"`
}

// GeneratorCPU is the CPU of the process that ran the firehose over the
// measured span: that the load it offers is not what limits the nodes.
type GeneratorCPU struct {
	// Measured says what was measured, in words.
	Measured string `json:"measured"`
	// Cores is the growth of the process's CPU seconds per second;
	// OfferedPerSecond the growth of the distinct txs the firehose sent,
	// and SecondsPerKTx the CPU seconds per 1,000 of them.
	Cores            float64 `json:"cores"`
	OfferedPerSecond float64 `json:"offeredPerSecond"`
	SecondsPerKTx    float64 `json:"secondsPerKTx"`
}

const generatorMeasured = "the growth of this process's CPU time (user and system, all its threads: the firehose building, " +
	"signing and posting the txs, with the status polls and the supervisor; the nodes are processes of their own) over the growth " +
	"of the distinct txs the firehose sent, both between the status polls bounding the span"

// NodeCPU is one node's CPU over the measured span.
type NodeCPU struct {
	Name string `json:"name"`
	// Cores is the growth of its processCpuSeconds per second; CoresByWork
	// the same by work, absent when not measured.
	Cores       float64            `json:"cores"`
	CoresByWork map[string]float64 `json:"coresByWork,omitempty"`
	// TxsPerSecond is the growth of its txsOnChain per second;
	// SecondsPerKTx its CPU seconds per 1,000 of them, and RatioToFloor
	// that over the floor.
	TxsPerSecond  float64 `json:"txsPerSecond"`
	SecondsPerKTx float64 `json:"secondsPerKTx"`
	RatioToFloor  float64 `json:"ratioToFloor"`
	// Problem says why its figures are absent.
	Problem string `json:"problem,omitempty"`
}

// CPUWhenMissed is the nodes' CPU, summed over them, in the timeline's
// windows in which most (EB, voting node) pairs missed their voting
// windows, and in the other windows with votes.
type CPUWhenMissed struct {
	// WindowSeconds is the timeline's window.
	WindowSeconds float64 `json:"windowSeconds"`
	MissedWindows int     `json:"missedWindows"`
	OtherWindows  int     `json:"otherWindows"`
	MissedCores   float64 `json:"missedCores"` // mean over the windows
	OtherCores    float64 `json:"otherCores"`
	// MissedShares and OtherShares are the CPU's shares by work; absent
	// when the nodes did not measure their CPU by work.
	MissedShares map[string]float64 `json:"missedShares,omitempty"`
	OtherShares  map[string]float64 `json:"otherShares,omitempty"`
}

const cpuMeasured = "per node over the measured span: the growth of its processCpuSeconds (user and system) over the growth of " +
	"its txsOnChain, both between the status polls bounding the span; the floor: see floor.measured"

// newCPUReport is the CPU section: the nodes' figures over span (when the
// run has one), the floor (or why not), and the timeline's windows.
func newCPUReport(r loadRun, span *load.Span, floor *CPUFloor, floorErr error, timeline *Timeline) *CPUReport {
	c := &CPUReport{Measured: cpuMeasured, Nodes: []NodeCPU{}, Floor: floor}
	if floorErr != nil {
		c.FloorProblem = floorErr.Error()
	}
	if span != nil {
		var sum float64
		var measured int
		for i, name := range r.names {
			n := r.nodeCPU(i, name, *span, floor)
			if n.Problem == "" && n.SecondsPerKTx > 0 {
				sum += n.SecondsPerKTx
				measured++
			}
			c.Nodes = append(c.Nodes, n)
		}
		if measured > 0 {
			c.MeanSecondsPerKTx = sum / float64(measured)
		}
	}
	if floor != nil && floor.FloorSecondsPerKTx > 0 {
		c.RatioToFloor = c.MeanSecondsPerKTx / floor.FloorSecondsPerKTx
	}
	c.WhenMissed = whenMissed(timeline)
	if span != nil {
		c.Generator = r.generatorCPU(*span)
	}
	return c
}

// generatorCPU is the load generator's CPU over span, nil when the run
// did not measure it.
func (r loadRun) generatorCPU(span load.Span) *GeneratorCPU {
	cores, ok := sampleGrowth(r.samples, span.From, span.To, func(s statusSample) (float64, bool) { return s.generatorCPU, s.generatorMeasured })
	if !ok {
		return nil
	}
	g := &GeneratorCPU{Measured: generatorMeasured, Cores: cores}
	g.OfferedPerSecond, _ = sampleGrowth(r.samples, span.From, span.To, firehoseValue(func(c load.Counts) float64 { return float64(c.Submitted) }))
	if g.OfferedPerSecond > 0 {
		g.SecondsPerKTx = cores / (g.OfferedPerSecond / 1000)
	}
	return g
}

// nodeCPU is node i's CPU over span.
func (r loadRun) nodeCPU(i int, name string, span load.Span, floor *CPUFloor) NodeCPU {
	n := NodeCPU{Name: name}
	cores, ok := sampleGrowth(r.samples, span.From, span.To, nodeValue(i, func(n *nodeSample) float64 { return n.processCPU }))
	txs, txsOK := sampleGrowth(r.samples, span.From, span.To, nodeValue(i, func(n *nodeSample) float64 { return float64(n.txsOnChain) }))
	switch {
	case !ok || !txsOK:
		n.Problem = "not measured: fewer than two status polls in the span, or the node restarted in it"
		return n
	case txs == 0:
		n.Problem = "no txs reached its chain in the span"
	}
	n.Cores, n.TxsPerSecond, n.CoresByWork = cores, txs, r.coresByWork(i, span.From, span.To)
	if txs > 0 {
		n.SecondsPerKTx = cores / (txs / 1000)
	}
	if floor != nil && floor.FloorSecondsPerKTx > 0 {
		n.RatioToFloor = n.SecondsPerKTx / floor.FloorSecondsPerKTx
	}
	return n
}

// missedMost is the share of voting pairs above which a window counts as
// one where most voters missed their windows.
const missedMost = 0.5

// whenMissed sums the timeline's windows with votes into those in which
// most voters missed their windows and the others.
func whenMissed(t *Timeline) CPUWhenMissed {
	m := CPUWhenMissed{WindowSeconds: t.WindowSeconds}
	missed, other := map[string]float64{}, map[string]float64{}
	byWork := false
	for _, w := range t.Windows {
		if w.VotingPairs == 0 {
			continue
		}
		cores, shares := &m.OtherCores, other
		if w.MissedShare > missedMost {
			m.MissedWindows++
			cores, shares = &m.MissedCores, missed
		} else {
			m.OtherWindows++
		}
		*cores += w.Cores
		for work, c := range w.CoresByWork {
			shares[work] += c
			byWork = true
		}
	}
	if m.MissedWindows > 0 {
		m.MissedCores /= float64(m.MissedWindows)
	}
	if m.OtherWindows > 0 {
		m.OtherCores /= float64(m.OtherWindows)
	}
	if byWork {
		m.MissedShares, m.OtherShares = asShares(missed), asShares(other)
	}
	return m
}

// asShares divides each figure by their sum; nil when they sum to 0.
func asShares(byWork map[string]float64) map[string]float64 {
	var total float64
	for _, v := range byWork {
		total += v
	}
	if total <= 0 {
		return nil
	}
	shares := make(map[string]float64, len(byWork))
	for work, v := range byWork {
		shares[work] = v / total
	}
	return shares
}

// topShares spells the largest shares, largest first, as "closure-validation
// 41 %, fetch 22 %, …"; "not measured" for none.
func topShares(shares map[string]float64, most int) string {
	if len(shares) == 0 {
		return "not measured"
	}
	works := slices.SortedFunc(maps.Keys(shares), func(a, b string) int {
		return cmp.Or(cmp.Compare(shares[b], shares[a]), cmp.Compare(a, b))
	})
	var s string
	for i, work := range works[:min(most, len(works))] {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %.0f %%", work, 100*shares[work])
	}
	if len(works) > most {
		s += ", …"
	}
	return s
}
