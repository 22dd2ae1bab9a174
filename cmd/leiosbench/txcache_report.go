package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// txcacheReport is the whole result of a run; with --json it is printed as
// one document.
type txcacheReport struct {
	EBs        int          `json:"ebs"`
	TxsPerEB   int          `json:"txs_per_eb"`
	TotalTxs   int          `json:"total_txs"`
	Batches    int          `json:"batches"`
	GOMAXPROCS int          `json:"gomaxprocs"`
	GoVersion  string       `json:"go_version"`
	Structures []structure  `json:"structures"`
	Comparison []comparison `json:"comparison"`
	// Targets are judged only at the full shape (128 × 15,058).
	Targets []target `json:"targets,omitempty"`
}

// structure is one measured structure.
type structure struct {
	Name       string         `json:"name"`
	What       string         `json:"what"`
	Population *population    `json:"population,omitempty"`
	Lookups    []lookupResult `json:"lookups"`
}

// comparison is one hit ratio across the structures: the per-tx time of
// each one's median batch, and how many times slower than the txcache the
// map and the warm LeiosDB are.
type comparison struct {
	HitPct          int                `json:"hit_pct"`
	PerTxMedianNs   map[string]float64 `json:"per_tx_median_ns"`
	MapOverCache    float64            `json:"map_over_txcache"`
	DBWarmOverCache float64            `json:"leiosdb_warm_over_txcache,omitempty"`
}

// target is one of the tx cache's targets, against this run.
type target struct {
	What     string  `json:"what"`
	Bound    string  `json:"bound"`
	Measured float64 `json:"measured"`
	Unit     string  `json:"unit"`
	Met      bool    `json:"met"`
}

func (r *txcacheReport) structure(name string) *structure {
	for i := range r.Structures {
		if r.Structures[i].Name == name {
			return &r.Structures[i]
		}
	}
	return nil
}

// compare fills Comparison and, at the full shape, Targets.
func (r *txcacheReport) compare() {
	cache, refs, warm, cold := r.structure(nameCache), r.structure(nameMap), r.structure(nameDBWarm), r.structure(nameDBCold)
	for i, res := range cache.Lookups {
		c := comparison{HitPct: res.HitPct, PerTxMedianNs: map[string]float64{}}
		for _, s := range r.Structures {
			c.PerTxMedianNs[s.Name] = s.Lookups[i].PerTxMedianNs
		}
		c.MapOverCache = refs.Lookups[i].MedianNs / res.MedianNs
		if warm != nil {
			c.DBWarmOverCache = warm.Lookups[i].MedianNs / res.MedianNs
		}
		r.Comparison = append(r.Comparison, c)
	}
	if r.EBs != 128 || r.TxsPerEB != 15_058 {
		return
	}
	worst := func(s *structure, f func(lookupResult) float64) float64 {
		m := math.Inf(-1)
		for _, l := range s.Lookups {
			m = math.Max(m, f(l))
		}
		return m
	}
	least := func(f func(comparison) float64) float64 {
		m := math.Inf(1)
		for _, c := range r.Comparison {
			m = math.Min(m, f(c))
		}
		return m
	}
	perTx := func(l lookupResult) float64 { return l.PerTxMedianNs }
	batchMs := func(l lookupResult) float64 { return l.MedianNs / 1e6 }
	add := func(what, bound string, measured float64, unit string, met bool) {
		r.Targets = append(r.Targets, target{what, bound, measured, unit, met})
	}
	v := worst(cache, perTx)
	add("txcache lookup, per tx of the median batch (worst ratio)", "≤ 20", v, "ns", v <= 20)
	v = least(func(c comparison) float64 { return c.MapOverCache })
	add("txcache faster than the map (least ratio)", "≥ 3", v, "×", v >= 3)
	v = float64(cache.Population.TimeNs) / 1e6
	add("txcache population", "≤ 250", v, "ms", v <= 250)
	v = float64(cache.Population.TableBytes) / (1 << 20)
	add("txcache table", "≤ 180", v, "MiB", v <= 180)
	if warm == nil {
		return
	}
	v = worst(warm, batchMs)
	add("LeiosDB probe of one EB, warm, median batch (worst ratio)", "≤ 10", v, "ms", v <= 10)
	if cold != nil {
		v = worst(cold, batchMs)
		add("LeiosDB probe of one EB, cold, median batch (worst ratio)", "≤ 300", v, "ms", v <= 300)
	}
	v = least(func(c comparison) float64 { return c.DBWarmOverCache })
	add("txcache faster than the warm probe (least ratio)", "≥ 50", v, "×", v >= 50)
}

// write prints the report: per structure its population
// and its lookups with the sorted batch times, then the side-by-side table.
func (r *txcacheReport) write(out io.Writer) {
	fmt.Fprintf(out, "LeiosTxCache worst-case benchmark (%s, GOMAXPROCS %d)\n", r.GoVersion, r.GOMAXPROCS)
	fmt.Fprintf(out, "EBs in index : %d\ntxs per EB   : %d\ntotal txs    : %d\n", r.EBs, r.TxsPerEB, r.TotalTxs)
	for _, s := range r.Structures {
		fmt.Fprintf(out, "\n== %s: %s ==\n", s.Name, s.What)
		if p := s.Population; p != nil {
			writePopulation(out, p)
		}
		writeLookups(out, s.Lookups, r.Batches)
	}

	fmt.Fprintf(out, "\n== side by side: per-tx time of the median batch ==\n")
	fmt.Fprintf(out, "%6s", "hits")
	for _, s := range r.Structures {
		fmt.Fprintf(out, " %14s", s.Name)
	}
	fmt.Fprintf(out, " %13s", "map/txcache")
	if r.structure(nameDBWarm) != nil {
		fmt.Fprintf(out, " %14s", "warm/txcache")
	}
	fmt.Fprintln(out)
	for _, c := range r.Comparison {
		fmt.Fprintf(out, "%5d%%", c.HitPct)
		for _, s := range r.Structures {
			fmt.Fprintf(out, " %11.1f ns", c.PerTxMedianNs[s.Name])
		}
		fmt.Fprintf(out, " %12.2f×", c.MapOverCache)
		if c.DBWarmOverCache != 0 {
			fmt.Fprintf(out, " %13.1f×", c.DBWarmOverCache)
		}
		fmt.Fprintln(out)
	}

	if len(r.Targets) > 0 {
		fmt.Fprintf(out, "\n== targets ==\n")
		for _, t := range r.Targets {
			verdict := "MISSED"
			if t.Met {
				verdict = "met"
			}
			fmt.Fprintf(out, "%-60s %6s %-3s  measured %8.2f %-3s  %s\n", t.What, t.Bound, t.Unit, t.Measured, t.Unit, verdict)
		}
	}
}

func writePopulation(out io.Writer, p *population) {
	fmt.Fprintln(out, "population:")
	if p.Reused {
		fmt.Fprintln(out, "  time         : (reused a store populated by an earlier run)")
	} else {
		fmt.Fprintf(out, "  time         : %s\n", fmtDuration(time.Duration(p.TimeNs)))
	}
	if p.HeapBytes != 0 {
		fmt.Fprintf(out, "  heap in use  : %s (growth, after runtime.GC)\n", fmtBytes(p.HeapBytes))
	}
	if p.TableBytes != 0 {
		fmt.Fprintf(out, "  table        : %s\n", fmtBytes(p.TableBytes))
	}
	if p.DiskBytes != 0 {
		fmt.Fprintf(out, "  files        : %s\n", fmtBytes(p.DiskBytes))
	}
}

func writeLookups(out io.Writer, lookups []lookupResult, batches int) {
	if len(lookups) == 0 {
		return
	}
	fmt.Fprintf(out, "lookup — EB batch of %d (x%d each, after 1 warm-up):\n", lookups[0].Txs, batches)
	for _, l := range lookups {
		fmt.Fprintf(out, "  %3d%% hits (%d/%d): avg %s, per-tx %.1f ns; median %s, per-tx %.1f ns\n",
			l.HitPct, l.Hits, l.Txs, fmtDuration(time.Duration(l.AvgNs)), l.PerTxAvgNs,
			fmtDuration(time.Duration(l.MedianNs)), l.PerTxMedianNs)
	}
	fmt.Fprintf(out, "batch durations (ascending per column; %d rows x %d ratios):\n", batches, len(lookups))
	var row strings.Builder
	for _, l := range lookups {
		fmt.Fprintf(&row, "%12s", fmt.Sprintf("%d%%", l.HitPct))
	}
	fmt.Fprintln(out, row.String())
	for i := range batches {
		row.Reset()
		for _, l := range lookups {
			fmt.Fprintf(&row, "%12s", fmtDuration(time.Duration(l.BatchNs[i])))
		}
		fmt.Fprintln(out, row.String())
	}
}

// fmtDuration prints d as the seed does: two decimals in the largest unit
// that keeps it at or above one.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.2f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%d ns", d.Nanoseconds())
}

// fmtBytes prints n in MiB (or KiB below one MiB), as the seed does.
func fmtBytes(n int64) string {
	if math.Abs(float64(n)) >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
