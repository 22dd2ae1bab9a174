package report

import (
	"fmt"
	"io"
	"time"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/devnet/chaos"
	"github.com/leiosnode/leiosnode/lab/load"
)

// Observations are what a devnet run gathered from outside its nodes, for
// Build: the status polls (Watch, Series), every node's EB list and chain
// walk at the end, the firehose's report and txs, and the chaos mode's
// faults.
type Observations struct {
	Dir              string
	Started, Stopped time.Time
	Slot             uint64   // the slot in progress when the run ended
	Exited           []string // by node: how its process ended, when before the devnet stopped it
	Genesis          *consensus.Genesis
	Warmup           time.Duration
	Watch            *ChainWatch
	Series           *StatusSeries
	EBLists          []EBList
	Walks            []load.ChainWalk
	// Txs is the firehose's final check, Span the run's measured span (nil
	// when the run ended in its warm-up) and FloorSample the firehose's
	// txs for the CPU floor; Txs is nil without a firehose.
	Txs         *load.Report
	Span        *load.Span
	FloorSample [][]byte
	// Chaos is what the chaos mode did; nil without it.
	Chaos *ChaosRun
	// Hops, on a devnet whose links follow a topology, are the fewest
	// links between its nodes: Hops[i][j] from node i to node j, -1 without
	// a path; nil for a full mesh.
	Hops [][]int
}

// ChaosRun is what the chaos mode did in a run, and the txs the nodes
// dropped meanwhile.
type ChaosRun struct {
	Spec    chaos.Spec
	Seed    uint64
	Faults  []chaos.Fault
	Stopped string
	Forks   []chaos.ForkSeen
	Drops   []load.Drop
}

// Build sums the run up and prints its summaries to out. It measures the
// CPU floor on the firehose's txs, so call it once the nodes have stopped,
// that they do not share its core.
func Build(o Observations, out io.Writer) Report {
	g := o.Genesis
	report := o.Watch.report(o.Dir, o.Started, o.Stopped, o.Slot, o.Exited)
	leios := o.Watch.leiosReport(g.Clock(), g.Leios.MinCertGap, o.EBLists, o.Walks)
	report.Txs, report.Leios = o.Txs, leios
	run := loadRun{clock: g.Clock(), rbInterval: g.Timing().MeanRBInterval(), names: o.Series.names, samples: o.Series.samples, ebs: leios.EBs, common: load.CommonPrefix(load.Answered(o.Walks)), hops: o.Hops}
	report.Timeline = newTimeline(run, timelineWidth(run.rbInterval))
	if o.Txs != nil {
		if o.Span != nil {
			report.Targets = newTargets(run, *o.Span, o.Warmup, o.Txs)
		}
		if o.Txs.MeanTxBytes > 0 {
			report.Capacity = newCapacityReport(g, run, o.Span, o.Txs)
		}
		floor, err := measureFirehoseFloor(g, o.FloorSample)
		report.CPU = newCPUReport(run, o.Span, floor, err, report.Timeline)
	}
	printAgreement(out, report.Agreement)
	printProtocols(out, report.Nodes)
	printAwaited(out, report.Nodes)
	printLeiosSummary(out, leios)
	printLoadSummary(out, report, o.Warmup)
	if c := o.Chaos; c != nil {
		report.Chaos = newChaosReport(c.Spec, c.Seed, c.Faults, c.Stopped, c.Forks, o.Txs, c.Drops)
		printChaosSummary(out, report.Chaos)
	}
	return report
}

// Write writes the report as JSON to file and its plots beside it (the
// series', g's and the offered rate's; the timeline's; the leader
// schedule's chance, when the run was measured beside it), saying so on
// out.
func Write(file string, report Report, series *StatusSeries, g *consensus.Genesis, offered float64, out io.Writer) error {
	if err := config.WriteJSON(file, report); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintf(out, "report written to %s\n", file)
	plotsFile := reportPlotsFile(file)
	if err := writeReportPlots(plotsFile, series, g, report.Leios, offered); err != nil {
		return fmt.Errorf("writing the report's plots: %w", err)
	}
	loadFile := loadPlotsFile(file)
	if err := writeLoadPlots(loadFile, report.Timeline, report.Targets); err != nil {
		return fmt.Errorf("writing the report's load plots: %w", err)
	}
	fmt.Fprintf(out, "plots written to %s and %s\n", plotsFile, loadFile)
	chanceFile := chancePlotFile(file)
	if drawn, err := writeChancePlot(chanceFile, report.Capacity); err != nil {
		return fmt.Errorf("writing the report's chance plot: %w", err)
	} else if drawn {
		fmt.Fprintf(out, "the leader schedule's chance drawn in %s\n", chanceFile)
	}
	return nil
}
