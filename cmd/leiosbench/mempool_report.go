package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// mempoolReport is the whole result of a run; with --json it is printed as
// one document.
type mempoolReport struct {
	Settings   mempoolFlags `json:"settings"`
	GOMAXPROCS int          `json:"gomaxprocs"`
	GoVersion  string       `json:"go_version"`
	TxBytes    int          `json:"tx_bytes"`
	// CeilingTxS is the serial validation ceiling this run measured.
	CeilingTxS float64    `json:"serial_validation_ceiling_tx_s"`
	Cells      []mpCell   `json:"cells"`
	Holds      []mpHold   `json:"sync_lock_hold"`
	Targets    []mpTarget `json:"targets"`
}

// mpTarget is one of the mempool's benchmark targets, against this run.
type mpTarget struct {
	What     string `json:"what"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
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
		worstShare := math.Inf(1)
		var worstShareAt string
		var low, high *mpCell // the single-lock cells of least and most occupancy
		for i := range r.Cells {
			c := &r.Cells[i]
			if c.Mempool == mpSingle {
				if low == nil || c.OccupancyTxs < low.OccupancyTxs {
					low = c
				}
				if high == nil || c.OccupancyTxs > high.OccupancyTxs {
					high = c
				}
				continue
			}
			worstStall = max(worstStall, time.Duration(c.MaxReaderStallNs))
			if share := c.ThroughputTxS / c.ExpectedTxS; share < worstShare {
				worstShare, worstShareAt = share, fmt.Sprintf("%d tx/s × %d peers", c.OfferedTxS, c.Peers)
			}
		}
		r.Targets = append(r.Targets,
			mpTarget{
				What:     "double-buffered max reader stall ≤ 1 ms in every cell",
				Measured: "worst " + fmtDur(worstStall),
				Met:      worstStall <= time.Millisecond,
			},
			mpTarget{
				What:     "double-buffered throughput ≥ 95 % of min(offered, ceiling) in every cell",
				Measured: fmt.Sprintf("worst %.1f %% (%s)", 100*worstShare, worstShareAt),
				Met:      worstShare >= 0.95,
			})
		if low != nil && high != nil && low != high {
			r.Targets = append(r.Targets, mpTarget{
				What: "single-lock max reader stall grows with occupancy (matrix)",
				Measured: fmt.Sprintf("%s at %d txs held → %s at %d txs held",
					fmtDur(time.Duration(low.MaxReaderStallNs)), low.OccupancyTxs, fmtDur(time.Duration(high.MaxReaderStallNs)), high.OccupancyTxs),
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
		r.Targets = append(r.Targets, mpTarget{
			What: "single-lock sync lock hold grows with occupancy (hold test)",
			Measured: fmt.Sprintf("%s at %d txs → %s at %d txs",
				fmtDur(time.Duration(first.LockHeldNs)), first.HeldTxs, fmtDur(time.Duration(last.LockHeldNs)), last.HeldTxs),
			Met: last.LockHeldNs > first.LockHeldNs,
		})
	}
}

func (r *mempoolReport) write(w io.Writer) {
	s := r.Settings
	fmt.Fprintf(w, "leiosbench mempool — apply %s, reapply %s (busy-wait, on top of the real ledger rules), ledger read %s + %s/key\n",
		fmtDur(s.ApplyCost), fmtDur(s.ReapplyCost), fmtDur(s.ReadBase), fmtDur(s.ReadPerKey))
	fmt.Fprintf(w, "%s per cell, tip change every %s, reads every %s; real signed txs of %d bytes; GOMAXPROCS %d, %s\n",
		s.Duration, s.SyncPeriod, s.ReadPeriod, r.TxBytes, r.GOMAXPROCS, r.GoVersion)
	fmt.Fprintf(w, "serial validation ceiling (measured): %.0f tx/s\n", r.CeilingTxS)

	if len(r.Cells) > 0 {
		r.matrix(w, "Max reader stall (double-buffered / single-lock)", func(d, sl *mpCell) string {
			return fmtDur(time.Duration(d.MaxReaderStallNs)) + " / " + fmtDur(time.Duration(sl.MaxReaderStallNs))
		})
		r.matrix(w, "Throughput, tx/s and % of min(offered, ceiling) (double-buffered / single-lock)", func(d, sl *mpCell) string {
			return fmt.Sprintf("%.0f (%.0f%%) / %.0f (%.0f%%)", d.ThroughputTxS, 100*d.ThroughputTxS/d.ExpectedTxS, sl.ThroughputTxS, 100*sl.ThroughputTxS/sl.ExpectedTxS)
		})
		r.matrix(w, "Final occupancy, txs (double-buffered / single-lock)", func(d, sl *mpCell) string {
			return fmt.Sprintf("%d / %d", d.OccupancyTxs, sl.OccupancyTxs)
		})
		r.matrix(w, "Longest sync lock hold (double-buffered / single-lock)", func(d, sl *mpCell) string {
			return fmtDur(time.Duration(d.MaxSyncLockHoldNs)) + " / " + fmtDur(time.Duration(sl.MaxSyncLockHoldNs))
		})
	}

	if len(r.Holds) > 0 {
		fmt.Fprintln(w, "\nLock hold of one sync (two adders at the ceiling meanwhile)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "held txs\tmempool\tlock held\tsync\trounds\tresidual\tmax reader stall\tadded during sync\t")
		for _, h := range r.Holds {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t\n", h.HeldTxs, h.Mempool, fmtDur(time.Duration(h.LockHeldNs)), fmtDur(time.Duration(h.SyncNs)),
				h.Rounds, h.Residual, fmtDur(time.Duration(h.MaxReaderStallNs)), h.AddedDuringSync)
		}
		tw.Flush()
	}

	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "\nTargets")
		for _, t := range r.Targets {
			mark := "met"
			if !t.Met {
				mark = "NOT MET"
			}
			fmt.Fprintf(w, "  [%s] %s: %s\n", mark, t.What, t.Measured)
		}
	}
}

// matrix prints one table: peers down, offered load
// across, one cell of text per (offered, peers) from both mempools.
func (r *mempoolReport) matrix(w io.Writer, title string, cell func(double, single *mpCell) string) {
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
			d, sl := r.cell(mpDouble, o, p), r.cell(mpSingle, o, p)
			if d == nil || sl == nil {
				row = append(row, "-")
				continue
			}
			row = append(row, cell(d, sl))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
}

// fmtDur prints a duration with three significant digits at most.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%dns", d.Nanoseconds())
}
