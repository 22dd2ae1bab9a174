package txsubmission

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/bench/output"
)

// tsReport is the whole result of a run, printed as tables and, with
// --json, written as one document.
type tsReport struct {
	Settings  tsFlags             `json:"settings"`
	Machine   machine.Description `json:"machine"`
	Transport string              `json:"transport"`
	// Alone are the no-peer cells, one per rate: what the adds alone cost.
	Alone   []tsCell         `json:"no_peers"`
	Cells   []tsCell         `json:"cells"`
	Targets []output.Verdict `json:"targets"`
}

func (r *tsReport) cell(variant string, offered, peers int) *tsCell {
	for i := range r.Cells {
		if c := &r.Cells[i]; c.Variant == variant && c.OfferedTxS == offered && c.Peers == peers {
			return c
		}
	}
	return nil
}

// growth is how the serving cost of variant grows from the fewest peers to
// the most at a rate: net CPU per tx served at the most over at the fewest.
func (r *tsReport) growth(variant string, offered int) (float64, bool) {
	lo, hi := slices.Min(r.Settings.Peers), slices.Max(r.Settings.Peers)
	a, b := r.cell(variant, offered, lo), r.cell(variant, offered, hi)
	if lo == hi || a == nil || b == nil || a.NetCPUPerServeNs == 0 {
		return 0, false
	}
	return b.NetCPUPerServeNs / a.NetCPUPerServeNs, true
}

// judge fills Targets.
func (r *tsReport) judge() {
	lo, hi := slices.Min(r.Settings.Peers), slices.Max(r.Settings.Peers)
	for _, offered := range r.Settings.Offered {
		if lo != hi {
			// Said even when this run could not measure it (the adds'
			// CPU left no serving cost at the fewest peers on a busy
			// machine): a missing line would read as not asked.
			g, ok := r.growth(tsLockFree, offered)
			measured := fmt.Sprintf("%.2f×", g)
			if !ok {
				measured = "not measurable: no serving CPU left at the fewest peers, net of the adds"
			}
			r.Targets = append(r.Targets, output.Verdict{
				What:     fmt.Sprintf("lock-free serving cost per tx flat from %d to %d peers at %d tx/s (≤ 1.5× growth, net of the adds)", lo, hi, offered),
				Measured: measured,
				Met:      ok && g <= 1.5,
			})
		}
		if g, ok := r.growth(tsPerItem, offered); ok {
			r.Targets = append(r.Targets, output.Verdict{
				What:     fmt.Sprintf("lock-per-item serving cost per tx grows from %d to %d peers at %d tx/s (shown)", lo, hi, offered),
				Measured: fmt.Sprintf("%.2f×", g),
				Met:      g > 1,
			})
		}
		// The baseline's CPU per tx can fall as it serves less; the add
		// path, which waits for the lock every walk takes, shows its cost.
		if a, b := r.cell(tsPerItem, offered, lo), r.cell(tsPerItem, offered, hi); lo != hi && a != nil && b != nil && a.AddMaxNs > 0 {
			r.Targets = append(r.Targets, output.Verdict{
				What: fmt.Sprintf("lock-per-item add path's max latency grows from %d to %d peers at %d tx/s (shown)", lo, hi, offered),
				Measured: fmt.Sprintf("%s → %s (%.1f×)", output.Duration(time.Duration(a.AddMaxNs)), output.Duration(time.Duration(b.AddMaxNs)),
					float64(b.AddMaxNs)/float64(a.AddMaxNs)),
				Met: b.AddMaxNs > a.AddMaxNs,
			})
		}
	}
	violations := 0
	for _, c := range r.Cells {
		violations += c.Violations
	}
	r.Targets = append(r.Targets, output.Verdict{What: "no protocol violation in any session", Measured: fmt.Sprint(violations), Met: violations == 0})
}

func (r *tsReport) Write(w io.Writer) {
	s := r.Settings
	fmt.Fprintln(w, "leiosbench txsubmission: one node's mempool served to pulling peers, lock-free beside a lock per tx")
	r.Machine.Write(w)
	fmt.Fprintf(w, "real tx-submission client and server over %s; %s windows after %s; the node's real mempool and adds\n", r.Transport, s.Duration, s.WarmUp)
	fmt.Fprintf(w, "%d txs held for the whole cell, waiting for a later block, that every peer has: each offered once to each peer before the window; blocks every %s take what the adder added\n", s.Held, s.Blocks)
	fmt.Fprintln(w, "CPU: the whole process's (node and peers); net: less what the adds alone cost at the same rate (no-peer cell)")
	for _, a := range r.Alone {
		fmt.Fprintf(w, "  %d tx/s, no peers: %d added, %s of CPU per add, add p99 %s, max %s\n", a.OfferedTxS, a.Added,
			output.Duration(time.Duration(a.CPUNs/max(a.Added, 1))), output.Duration(time.Duration(a.AddP99Ns)), output.Duration(time.Duration(a.AddMaxNs)))
	}

	for _, offered := range s.Offered {
		fmt.Fprintf(w, "\n%d tx/s offered\n", offered)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "peers\tserving\tserved tx/s\tof offered×peers\tCPU per tx served\tnet\tadd p50\tadd p99\tadd max\t")
		for _, peers := range s.Peers {
			for _, variant := range []string{tsLockFree, tsPerItem} {
				c := r.cell(variant, offered, peers)
				if c == nil {
					continue
				}
				fmt.Fprintf(tw, "%d\t%s\t%.0f\t%.0f %%\t%s\t%s\t%s\t%s\t%s\t\n", peers, variant, c.ServedTxS, 100*c.ServedShare,
					output.Duration(time.Duration(c.CPUPerServeNs)), output.Duration(time.Duration(c.NetCPUPerServeNs)),
					output.Duration(time.Duration(c.AddP50Ns)), output.Duration(time.Duration(c.AddP99Ns)), output.Duration(time.Duration(c.AddMaxNs)))
			}
		}
		tw.Flush()
		var growth []string
		for _, variant := range []string{tsLockFree, tsPerItem} {
			if g, ok := r.growth(variant, offered); ok {
				growth = append(growth, fmt.Sprintf("%s %.2f×", variant, g))
			}
		}
		if len(growth) > 0 {
			fmt.Fprintf(w, "net CPU per tx served, most peers over fewest: %s\n", strings.Join(growth, ", "))
		}
	}

	output.WriteVerdicts(w, r.Targets)
}
