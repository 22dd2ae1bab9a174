package report

import (
	"fmt"
	"github.com/leiosnode/leiosnode/consensus/capacity"
	"github.com/leiosnode/leiosnode/lab/load"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// printLoadSummary prints the report's load sections at a glance: the
// targets over the measured span, the run beside the network's capacity,
// the nodes' CPU per 1,000 txs against the floor, what took the CPU when
// voters missed their windows, and the timeline's table.
func printLoadSummary(out io.Writer, r Report, warmup time.Duration) {
	if t := r.Targets; t != nil {
		printTargets(out, t)
	} else if r.Txs != nil {
		fmt.Fprintf(out, "no measured span: the run did not outlast its warm-up of %v (--warmup) after the system start, so no targets and no CPU per tx\n", warmup)
	}
	if c := r.Capacity; c != nil {
		printCapacity(out, c)
	}
	if c := r.CPU; c != nil {
		printCPU(out, c)
	}
	if tl := r.Timeline; tl != nil && len(tl.Windows) > 0 {
		printTimeline(out, tl)
	}
}

func printTargets(out io.Writer, t *Targets) {
	fmt.Fprintf(out, "measured span %.0f–%.0f s after the system start (warm-up %.0f s):\n", t.FromS, t.ToS, t.WarmupS)
	fmt.Fprintf(out, "  on chain %.1f tx/s; offered %.1f tx/s (%.1f POSTs/s), admitted %.1f/s, refused %.1f/s\n",
		t.OnChainPerSecond, t.OfferedPerSecond, t.PostsPerSecond, t.AdmittedPerSecond, t.RefusedPerSecond)
	every := "every window has one"
	if !t.EveryWindowCertified {
		every = "NOT every window has one"
	}
	fmt.Fprintf(out, "  EBs certified %d of %d announced (%.0f %%); per %s (%d mean RB intervals): %s — %s\n",
		t.EBsCertified, t.EBsAnnounced, 100*t.CertifiedShare, capacity.Seconds(t.CertifiedWindowS), certifiedWindowRBs, spaced(t.CertifiedPer30s), every)
	if l := t.Latency; l != nil {
		fmt.Fprintf(out, "  submit to chain p95 %s, p50 %s over %d txs first sent in the span; lost %d (whole run)\n", load.Seconds(l.P95Ms), load.Seconds(l.P50Ms), l.Txs, t.Lost)
	} else {
		fmt.Fprintf(out, "  submit to chain: no tx first sent in the span is on every chain; lost %d (whole run)\n", t.Lost)
	}
	switch p := t.MempoolPinned; {
	case p == nil:
		fmt.Fprintln(out, "  mempool pinned at its bound: not measured (the nodes gave no byte bound)")
	case p.Node == "":
		fmt.Fprintf(out, "  mempool pinned at ≥ %.0f %% of its byte bound: never\n", 100*p.PinnedShare)
	default:
		fmt.Fprintf(out, "  mempool pinned at ≥ %.0f %% of its byte bound: longest %.0f s (%s)\n", 100*p.PinnedShare, p.Seconds, p.Node)
	}
	fmt.Fprintf(out, "  refused by the nodes' edges: %s; 503s to the firehose: %s\n", countsOrNone(t.RefusedByNodes), countsOrNone(t.RefusedByFirehose))
}

func printCPU(out io.Writer, c *CPUReport) {
	if len(c.Nodes) > 0 {
		var parts []string
		for _, n := range c.Nodes {
			if n.Problem != "" && n.SecondsPerKTx == 0 {
				parts = append(parts, fmt.Sprintf("%s %s", n.Name, n.Problem))
				continue
			}
			part := fmt.Sprintf("%s %.3f s (%.2f cores", n.Name, n.SecondsPerKTx, n.Cores)
			if n.RatioToFloor > 0 {
				part += fmt.Sprintf(", %.1f× the floor", n.RatioToFloor)
			}
			parts = append(parts, part+")")
		}
		fmt.Fprintf(out, "CPU per 1,000 txs on chain over the span (a node's processCpuSeconds over its txsOnChain): %s", strings.Join(parts, ", "))
		if c.RatioToFloor > 0 {
			fmt.Fprintf(out, "; mean %.3f s = %.1f× the floor", c.MeanSecondsPerKTx, c.RatioToFloor)
		}
		fmt.Fprintln(out)
	}
	if g := c.Generator; g != nil {
		fmt.Fprintf(out, "  the load generator (this process: the firehose, the status polls, the supervisor; not the nodes): %.2f cores, %.3f s per 1,000 txs offered at %.1f tx/s\n",
			g.Cores, g.SecondsPerKTx, g.OfferedPerSecond)
	}
	if f := c.Floor; f != nil {
		fmt.Fprintf(out, "  floor %.3f s per 1,000 txs = decode %.4f + apply %.4f (its ed25519 witness check alone %.4f) + reapply %.4f\n",
			f.FloorSecondsPerKTx, f.DecodeSecondsPerKTx, f.ApplySecondsPerKTx, f.WitnessSecondsPerKTx, f.ReapplySecondsPerKTx)
		fmt.Fprintf(out, "    the floor: %s; CPU time, measured after the nodes stopped, on %d of the firehose's txs\n", FloorDefinition, f.Txs)
	} else if c.FloorProblem != "" {
		fmt.Fprintf(out, "  floor not measured: %s\n", c.FloorProblem)
	}
	printWhenMissed(out, c.WhenMissed)
}

// printWhenMissed prints what took the CPU where most voters missed their
// voting windows, beside the other windows with votes.
func printWhenMissed(out io.Writer, m CPUWhenMissed) {
	if m.MissedWindows+m.OtherWindows == 0 {
		return
	}
	if m.MissedShares == nil && m.OtherShares == nil {
		fmt.Fprintf(out, "  cores (summed over the nodes) where most voters missed their window: %s; elsewhere: %s; CPU by work not measured (no cpuSeconds in /status)\n",
			windowCores(m.MissedWindows, m.WindowSeconds, m.MissedCores), windowCores(m.OtherWindows, m.WindowSeconds, m.OtherCores))
		return
	}
	if m.MissedWindows == 0 {
		fmt.Fprintln(out, "  no window where most voters missed their voting window")
	} else {
		fmt.Fprintf(out, "  CPU by work where most voters missed their window (%s): %s\n", windowCores(m.MissedWindows, m.WindowSeconds, m.MissedCores), topShares(m.MissedShares, 5))
	}
	if m.OtherWindows > 0 {
		fmt.Fprintf(out, "  CPU by work in the other windows with votes (%s): %s\n", windowCores(m.OtherWindows, m.WindowSeconds, m.OtherCores), topShares(m.OtherShares, 5))
	}
}

// windowCores spells how many timeline windows of width (in seconds),
// and their mean cores.
func windowCores(windows int, width, cores float64) string {
	if windows == 0 {
		return "no window"
	}
	return fmt.Sprintf("%d × %v at %.2f cores", windows, seconds(width), cores)
}

// seconds is s seconds as a duration, which spells itself: 10s, 1m30s.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func printTimeline(out io.Writer, t *Timeline) {
	fmt.Fprintf(out, "per %.0f s: EBs by slot start, stages in ms after it (p50/p95 over EB × node; voting deadline %d ms); rates per s\n", t.WindowSeconds, t.DeadlineMs)
	fmt.Fprintf(out, "%5s %3s %5s %9s %9s %9s %9s %9s %6s %4s | %7s %7s %7s %7s | %8s %5s\n",
		"s", "EBs", "txs", "announced", "body", "closure", "validated", "voted", "missed", "cert", "offered", "admit", "refused", "chain", "mempool", "cores")
	for _, w := range t.Windows {
		missed := "-"
		if w.VotingPairs > 0 {
			missed = fmt.Sprintf("%.0f%%", 100*w.MissedShare)
		}
		polled := fmt.Sprintf("%7.0f %7.0f %7.0f %7.0f | %8d %5.2f", w.OfferedPerSecond, w.AdmittedPerSecond, w.RefusedPerSecond, w.OnChainPerSecond, w.MempoolTxs, w.Cores)
		if w.Polls == 0 {
			polled = fmt.Sprintf("%7s %7s %7s %7.0f | %8s %5s", "-", "-", "-", w.OnChainPerSecond, "-", "-")
		}
		fmt.Fprintf(out, "%5.0f %3d %5.0f %9s %9s %9s %9s %9s %6s %4d | %s\n",
			w.FromS, w.EBs, w.MeanEBTxs,
			stageCell(w.Stages.Announced), stageCell(w.Stages.Body), stageCell(w.Stages.Closure), stageCell(w.Stages.Validated), stageCell(w.Stages.Voted),
			missed, w.EBsCertified, polled)
	}
}

// stageCell spells a stage's percentiles as p50/p95, "-" for none.
func stageCell(p *StagePercentiles) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", p.P50Ms, p.P95Ms)
}

// spaced spells counts separated by spaces.
func spaced(counts []int) string {
	parts := make([]string, len(counts))
	for i, n := range counts {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, " ")
}

// countsOrNone spells counts by reason, "none" when there are none.
func countsOrNone(counts map[string]uint64) string {
	var parts []string
	for _, reason := range slices.Sorted(maps.Keys(counts)) {
		if counts[reason] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", reason, counts[reason]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
