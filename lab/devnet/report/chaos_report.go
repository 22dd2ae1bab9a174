package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/leiosnode/leiosnode/lab/devnet/chaos"
	"github.com/leiosnode/leiosnode/lab/load"
)

// ChaosReport is the report's account of a chaos run: every fault, the
// nodes' recovery from it, the forks the nodes went through and what
// became of the firehose's txs.
type ChaosReport struct {
	// Spec is the --chaos spec, every length spelt out; Seed the seed of
	// its random choices (--chaos-seed reruns them).
	Spec string `json:"spec"`
	Seed uint64 `json:"seed"`
	// Faults are the faults injected, in order.
	Faults  []chaos.Fault `json:"faults"`
	Summary ChaosSummary  `json:"summary"`
	// Forks are the rollbacks the nodes' statuses showed (see ForkSeen),
	// from the supervisor's polls (a second apart) and the chaos mode's
	// (a fifth of a second apart during and after a fault).
	Forks []chaos.ForkSeen `json:"forks"`
	// Stopped says why the chaos mode stopped before the run ended.
	Stopped string `json:"stopped,omitempty"`
	// TxsLost is the firehose's lost txs (txs.lost): admitted, yet on no
	// chain and in no mempool at the end. TxsDroppedByNodes is its
	// droppedByNodes: txs a killed node lost and the firehose sent again.
	// Both absent without a firehose.
	TxsLost           *uint64 `json:"txsLost,omitempty"`
	TxsDroppedByNodes *uint64 `json:"txsDroppedByNodes,omitempty"`
}

// ChaosSummary sums the faults up, over all kinds and by kind.
type ChaosSummary struct {
	ChaosKindSummary
	ByKind map[chaos.Kind]ChaosKindSummary `json:"byKind"`
	// Forks counts the rollbacks seen; DeepestFork is the deepest, in
	// blocks.
	Forks       int    `json:"forks"`
	DeepestFork uint64 `json:"deepestFork"`
}

// ChaosKindSummary counts faults and their recoveries; the times to rejoin
// are over the recovered ones (absent when there are none).
type ChaosKindSummary struct {
	Injected       int    `json:"injected"`
	Recovered      int    `json:"recovered"`
	MedianRejoinMs *int64 `json:"medianRejoinMs,omitempty"`
	MaxRejoinMs    *int64 `json:"maxRejoinMs,omitempty"`
}

// newChaosReport sums up a chaos run; txs is the firehose's report (nil
// without a firehose).
//
// Each drop of txs the firehose found goes to the last fault that struck
// before it was found: the fault that made the node drop them, as the
// firehose finds a drop within seconds of it and faults never overlap.
func newChaosReport(spec chaos.Spec, seed uint64, faults []chaos.Fault, stopped string, forks []chaos.ForkSeen, txs *load.Report, drops []load.Drop) *ChaosReport {
	faults = slices.Clone(faults)
	for _, d := range drops {
		i := len(faults) - 1
		for i >= 0 && faults[i].At.After(d.At) {
			i--
		}
		if i >= 0 {
			faults[i].TxsDropped += d.Txs
		}
	}
	r := &ChaosReport{Spec: spec.String(), Seed: seed, Faults: faults, Forks: forks, Stopped: stopped}
	if r.Faults == nil {
		r.Faults = []chaos.Fault{}
	}
	if r.Forks == nil {
		r.Forks = []chaos.ForkSeen{}
	}
	r.Summary.ChaosKindSummary = summarizeFaults(faults)
	r.Summary.ByKind = map[chaos.Kind]ChaosKindSummary{}
	for _, kind := range chaos.Kinds {
		of := slices.DeleteFunc(slices.Clone(faults), func(f chaos.Fault) bool { return f.Kind != kind })
		if len(of) > 0 {
			r.Summary.ByKind[kind] = summarizeFaults(of)
		}
	}
	r.Summary.Forks = len(forks)
	for _, f := range forks {
		r.Summary.DeepestFork = max(r.Summary.DeepestFork, f.Depth)
	}
	if txs != nil {
		lost, dropped := txs.Lost, txs.DroppedByNodes
		r.TxsLost, r.TxsDroppedByNodes = &lost, &dropped
	}
	return r
}

func summarizeFaults(faults []chaos.Fault) ChaosKindSummary {
	s := ChaosKindSummary{Injected: len(faults)}
	var rejoins []int64
	for _, f := range faults {
		if f.Recovered {
			s.Recovered++
			rejoins = append(rejoins, *f.RejoinMs)
		}
	}
	if len(rejoins) > 0 {
		slices.Sort(rejoins)
		median, most := medianOfSorted(rejoins), rejoins[len(rejoins)-1]
		s.MedianRejoinMs, s.MaxRejoinMs = &median, &most
	}
	return s
}

// printChaosSummary prints the chaos section: a line a fault, the forks,
// and the txs.
func printChaosSummary(out io.Writer, r *ChaosReport) {
	s := r.Summary
	fmt.Fprintf(out, "chaos (%s, seed %d): %d faults, %d recovered", r.Spec, r.Seed, s.Injected, s.Recovered)
	if s.MedianRejoinMs != nil {
		fmt.Fprintf(out, "; time to rejoin median %s, max %s", load.Seconds(*s.MedianRejoinMs), load.Seconds(*s.MaxRejoinMs))
	}
	fmt.Fprintln(out)
	for _, f := range r.Faults {
		fmt.Fprintf(out, "  %+7.1fs %-9s %-14s %5.1fs  ", f.AtSeconds, f.Kind, strings.Join(f.Nodes, ","), float64(f.LengthMs)/1000)
		switch {
		case f.Recovered:
			fmt.Fprintf(out, "rejoined %s after", load.Seconds(*f.RejoinMs))
		default:
			fmt.Fprintf(out, "NOT RECOVERED: %s", f.Problem)
		}
		if f.TipBefore != nil && f.TipAfter != nil {
			fmt.Fprintf(out, " (tip #%d before the kill, #%d on restart)", f.TipBefore.BlockNumber, f.TipAfter.BlockNumber)
		}
		if r := f.Refill; r != nil && r.RefilledMs != nil {
			fmt.Fprintf(out, "; %d certified closures refilled in %s", r.Missing, load.Seconds(*r.RefilledMs))
			if r.PeerStopped != "" {
				fmt.Fprintf(out, ", %s stopped with %d to go", r.PeerStopped, r.StoppedAtMissing)
			}
			fmt.Fprintf(out, ", %d blocks served", r.BlocksServed)
		}
		if f.TxsDropped > 0 {
			fmt.Fprintf(out, "; %d txs dropped", f.TxsDropped)
		}
		if len(f.Leaks) > 0 {
			fmt.Fprintf(out, " (the partition leaked: %s)", strings.Join(f.Leaks, "; "))
		}
		fmt.Fprintln(out)
		if a := f.Attack; a != nil {
			// What was done, then what the node did about it.
			fmt.Fprintf(out, "             %s\n             %s\n", a.Did, a.Line())
		}
	}
	if s.Forks == 0 {
		fmt.Fprintln(out, "  forks seen: none")
	} else {
		byNode := map[string]uint64{}
		for _, f := range r.Forks {
			byNode[f.Node]++
		}
		fmt.Fprintf(out, "  forks seen: %d rollbacks, the deepest %d blocks (%s)\n", s.Forks, s.DeepestFork, load.CountsByName(byNode))
	}
	if r.TxsLost != nil {
		fmt.Fprintf(out, "  txs lost: %d", *r.TxsLost)
		if *r.TxsDroppedByNodes > 0 {
			fmt.Fprintf(out, " (%d dropped by their nodes were sent again by the firehose)", *r.TxsDroppedByNodes)
		}
		fmt.Fprintln(out)
	}
	if r.Stopped != "" {
		fmt.Fprintf(out, "  the chaos mode stopped early: %s\n", r.Stopped)
	}
}
