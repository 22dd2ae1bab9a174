package mempool

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/bench/output"
)

// mempoolReport is the whole result of a run, printed as tables and, with
// --json, written as one document.
type mempoolReport struct {
	Settings mempoolFlags        `json:"settings"`
	Machine  machine.Description `json:"machine"`
	TxBytes  int                 `json:"tx_bytes"`
	// CeilingTxS is the serial validation ceiling this run measured.
	CeilingTxS float64  `json:"serial_validation_ceiling_tx_s"`
	Cells      []mpCell `json:"cells"`
	Holds      []mpHold `json:"sync_lock_hold"`
	// Trace is the execution trace's account of the reads (--trace).
	Trace   []mpTraceWalks   `json:"trace,omitempty"`
	Targets []output.Verdict `json:"targets"`
}

func (r *mempoolReport) cell(kind string, offered, peers int) *mpCell {
	for i := range r.Cells {
		if c := &r.Cells[i]; c.Mempool == kind && c.OfferedTxS == offered && c.Peers == peers {
			return c
		}
	}
	return nil
}

// judge fills Targets.
func (r *mempoolReport) judge() {
	if len(r.Cells) > 0 {
		var worstStall time.Duration
		var worstStallAt string
		worstShare := math.Inf(1)
		var worstShareAt string
		fewestSyncs := math.MaxInt
		var low, high *mpCell // the single-lock cells of least and most occupancy
		for i := range r.Cells {
			c := &r.Cells[i]
			at := fmt.Sprintf("%d tx/s × %d peers", c.OfferedTxS, c.Peers)
			fewestSyncs = min(fewestSyncs, c.Syncs)
			if c.Mempool == mpSingle {
				if low == nil || c.MaxOccupancyTxs < low.MaxOccupancyTxs {
					low = c
				}
				if high == nil || c.MaxOccupancyTxs > high.MaxOccupancyTxs {
					high = c
				}
				continue
			}
			if d := time.Duration(c.MaxReaderStallNs); d > worstStall {
				worstStall, worstStallAt = d, at
			}
			if share := c.ThroughputTxS / c.ExpectedTxS; share < worstShare {
				worstShare, worstShareAt = share, at
			}
		}
		r.Targets = append(r.Targets,
			output.Verdict{
				What:     "every cell had syncs",
				Measured: fmt.Sprintf("fewest %d", fewestSyncs),
				Met:      fewestSyncs > 0,
			},
			output.Verdict{
				What:     "double-buffered max reader stall ≤ 1 ms in every cell (forge and tx-submission walks)",
				Measured: fmt.Sprintf("worst %s (%s)", output.Duration(worstStall), worstStallAt),
				Met:      worstStall <= time.Millisecond,
			},
			output.Verdict{
				What:     "double-buffered throughput ≥ 95 % of min(offered, ceiling) in every cell",
				Measured: fmt.Sprintf("worst %.1f %% (%s)", 100*worstShare, worstShareAt),
				Met:      worstShare >= 0.95,
			})
		if low != nil && high != nil && low != high {
			r.Targets = append(r.Targets, output.Verdict{
				What: "single-lock max reader stall grows with occupancy (matrix)",
				Measured: fmt.Sprintf("%s at ≤ %d txs held → %s at ≤ %d txs held",
					output.Duration(time.Duration(low.MaxReaderStallNs)), low.MaxOccupancyTxs, output.Duration(time.Duration(high.MaxReaderStallNs)), high.MaxOccupancyTxs),
				Met: high.MaxReaderStallNs > low.MaxReaderStallNs,
			})
		}
	}
	var first, last *mpHold
	for i := range r.Holds {
		if h := &r.Holds[i]; h.Mempool == mpSingle {
			if first == nil {
				first = h
			}
			last = h
		}
	}
	if first != nil && last != first {
		r.Targets = append(r.Targets, output.Verdict{
			What: "single-lock sync lock hold grows with occupancy (hold test)",
			Measured: fmt.Sprintf("%s at %d txs → %s at %d txs",
				output.Duration(time.Duration(first.LockHeldNs)), first.HeldTxs, output.Duration(time.Duration(last.LockHeldNs)), last.HeldTxs),
			Met: last.LockHeldNs > first.LockHeldNs,
		})
	}
}

func (r *mempoolReport) Write(w io.Writer) {
	s := r.Settings
	fmt.Fprintln(w, "leiosbench mempool: the double-buffered mempool beside a single-lock baseline")
	r.Machine.Write(w)
	fmt.Fprintf(w, "apply %s, reapply %s (busy-wait, on top of the real ledger rules); ledger view %s to open + %s a key\n",
		output.Duration(s.ApplyCost), output.Duration(s.ReapplyCost), output.Duration(s.ReadBase), output.Duration(s.ReadPerKey))
	fmt.Fprintf(w, "%s per cell; a block (RB + certified EB, the forge's selection) every %s, then a sync; the forge's walk every %s; each peer's tx-submission walk every %s; real signed txs of %d bytes\n",
		s.Duration, s.SyncPeriod, s.ForgePeriod, s.ReadPeriod, r.TxBytes)
	fmt.Fprintf(w, "serial validation ceiling (measured): %.0f tx/s\n", r.CeilingTxS)
	fmt.Fprintln(w, "a reader's stall: its time in the mempool's calls (the forge's snapshot; a walk's TxsAfter and Lookups)")
	fmt.Fprintln(w, "the control walk: right after each tx-submission walk, the same window read from a private slice and map, in the same goroutine, timed the same way")

	if len(r.Cells) > 0 {
		r.matrix(w, "Max reader stall", "target ≤ 1 ms for the double-buffered", func(c *mpCell) string {
			return output.Duration(time.Duration(c.MaxReaderStallNs))
		})
		r.matrix(w, "Reader stall p99, forge, tx-submission walks", "", func(c *mpCell) string {
			return output.Duration(time.Duration(c.ForgeStall.P99Ns)) + ", " + output.Duration(time.Duration(c.ServeStall.P99Ns))
		})
		r.matrix(w, "Tx-submission walk stall, p50, max and walks over 1 ms, against the control walk's on a private copy in the same goroutines", "", func(c *mpCell) string {
			w, ctl := c.ServeStall, c.ControlStall
			return fmt.Sprintf("%s, %s, %d vs %s, %s, %d", output.Duration(time.Duration(w.P50Ns)), output.Duration(time.Duration(w.MaxNs)), w.Over1ms,
				output.Duration(time.Duration(ctl.P50Ns)), output.Duration(time.Duration(ctl.MaxNs)), ctl.Over1ms)
		})
		r.matrix(w, "The runtime and the machine: longest wait for a P (Go scheduler), GC cycles, heap allocated per s, OS run delay per s, load", "", func(c *mpCell) string {
			m := c.Machine
			osDelay := "-"
			if m.OSRunDelayMsPerS >= 0 {
				osDelay = fmt.Sprintf("%.0fms/s", m.OSRunDelayMsPerS)
			}
			return fmt.Sprintf("%s, %d GCs, %.0fMB/s, %s, %s", output.Duration(time.Duration(m.MaxSchedLatencyNs)), m.GCCycles, m.AllocBytesPerS/1e6, osDelay, m.LoadAvg)
		})
		r.matrix(w, "Throughput, tx/s and % of min(offered, ceiling)", "target ≥ 95 %", func(c *mpCell) string {
			return fmt.Sprintf("%.0f (%.0f%%)", c.ThroughputTxS, 100*c.ThroughputTxS/c.ExpectedTxS)
		})
		r.matrix(w, "Syncs, and the txs the blocks took", "", func(c *mpCell) string {
			return fmt.Sprintf("%d, %d", c.Syncs, c.BlockTxs)
		})
		r.matrix(w, "Occupancy when a block came, max and mean txs", "", func(c *mpCell) string {
			return fmt.Sprintf("%d, %.0f", c.MaxOccupancyTxs, c.MeanOccupancyTxs)
		})
		r.matrix(w, "Longest sync lock hold", "", func(c *mpCell) string {
			return output.Duration(time.Duration(c.MaxSyncLockHoldNs))
		})
		r.matrix(w, "The forge's whole walk, p50 and max", "", func(c *mpCell) string {
			return output.Duration(time.Duration(c.ForgeWalkP50Ns)) + ", " + output.Duration(time.Duration(c.ForgeWalkMaxNs))
		})
	}

	if len(r.Trace) > 0 {
		writeMPTrace(w, r.Trace)
	}

	if len(r.Holds) > 0 {
		fmt.Fprintln(w, "\nLock hold of one sync (two adders at the ceiling meanwhile)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "held txs\tmempool\tlock held\tsync\trounds\tresidual\tmax reader stall\tadded during sync\t")
		for _, h := range r.Holds {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t\n", h.HeldTxs, h.Mempool, output.Duration(time.Duration(h.LockHeldNs)), output.Duration(time.Duration(h.SyncNs)),
				h.Rounds, h.Residual, output.Duration(time.Duration(h.MaxReaderStallNs)), h.AddedDuringSync)
		}
		tw.Flush()
	}

	if len(r.Targets) > 0 {
		output.WriteVerdicts(w, r.Targets)
	}
}

// matrix prints one table: peers down, offered load across, in each cell
// the text of every mempool run, in the order of the title.
func (r *mempoolReport) matrix(w io.Writer, title, note string, cell func(*mpCell) string) {
	title += " (" + strings.Join(r.Settings.Mempools, " / ") + ")"
	if note != "" {
		title += "; " + note
	}
	fmt.Fprintln(w, "\n"+title)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	head := []string{"peers"}
	for _, o := range r.Settings.Offered {
		head = append(head, fmt.Sprintf("%d tx/s", o))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, p := range r.Settings.Peers {
		row := []string{fmt.Sprint(p)}
		for _, o := range r.Settings.Offered {
			var texts []string
			for _, kind := range r.Settings.Mempools {
				text := "-"
				if c := r.cell(kind, o, p); c != nil {
					text = cell(c)
				}
				texts = append(texts, text)
			}
			row = append(row, strings.Join(texts, " / "))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
}
