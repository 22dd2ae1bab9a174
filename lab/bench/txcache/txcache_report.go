package txcache

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/txcache"
)

// txcacheReport is the whole result of a run, printed as tables and, with
// --json, written as one document.
type txcacheReport struct {
	EBs      int `json:"ebs"`
	TxsPerEB int `json:"txs_per_eb"`
	TotalTxs int `json:"total_txs"`
	Batches  int `json:"batches"`
	// TxCapacity is the slots of the cache's table.
	TxCapacity int                 `json:"tx_capacity"`
	Machine    machine.Description `json:"machine"`
	// LLCBytes is the last-level cache as sysfs gives it (0: unknown);
	// EvictBytes what the cold path reads to evict the caches.
	LLCBytes   int       `json:"llc_bytes"`
	EvictBytes int       `json:"evict_bytes"`
	HugePages  hugePages `json:"huge_pages"`
	// Structures are the populations and the warm lookups.
	Structures []structure  `json:"structures"`
	Comparison []comparison `json:"comparison"`
	Cold       []coldRun    `json:"cold"`
	ColdRatios *coldRatios  `json:"cold_ratios,omitempty"`
	// Targets are judged only at the full shape (128 × 15,058, the default
	// table).
	Targets []target `json:"targets,omitempty"`
}

// structure is one measured structure.
type structure struct {
	Name       string         `json:"name"`
	What       string         `json:"what"`
	Population *population    `json:"population,omitempty"`
	Lookups    []lookupResult `json:"lookups"`
}

// comparison is one hit ratio of the warm lookups across the structures:
// the per-tx time of each one's median batch, and how many times slower
// than the txcache the map and the warm LeiosDB are.
type comparison struct {
	HitPct          int                `json:"hit_pct"`
	PerTxMedianNs   map[string]float64 `json:"per_tx_median_ns"`
	MapOverCache    float64            `json:"map_over_txcache"`
	DBWarmOverCache float64            `json:"leiosdb_warm_over_txcache,omitempty"`
}

// coldRatios compare the cold path's medians: the txcache against the
// floor and the map against the txcache, over all EBs and per hit ratio.
type coldRatios struct {
	CacheOverFloor float64       `json:"txcache_over_floor"`
	MapOverCache   float64       `json:"map_over_txcache"`
	ByHitPct       []coldRatioAt `json:"by_hit_pct"`
}

type coldRatioAt struct {
	HitPct         int     `json:"hit_pct"`
	CacheOverFloor float64 `json:"txcache_over_floor"`
	MapOverCache   float64 `json:"map_over_txcache"`
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

func (r *txcacheReport) cold(name string) *coldRun {
	for i := range r.Cold {
		if r.Cold[i].Name == name {
			return &r.Cold[i]
		}
	}
	return nil
}

// compare fills Comparison, ColdRatios and, at the full shape, Targets.
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
	coldCache, coldMap, floor := r.cold(nameCache), r.cold(nameMap), r.cold(nameFloor)
	if coldCache != nil && coldMap != nil && floor != nil {
		ratios := &coldRatios{
			CacheOverFloor: coldCache.Lookup.Median / floor.Lookup.Median,
			MapOverCache:   coldMap.Lookup.Median / coldCache.Lookup.Median,
		}
		for i, at := range coldCache.LookupByHitPct {
			ratios.ByHitPct = append(ratios.ByHitPct, coldRatioAt{
				HitPct:         at.HitPct,
				CacheOverFloor: at.PerTxMedianNs / floor.LookupByHitPct[i].PerTxMedianNs,
				MapOverCache:   coldMap.LookupByHitPct[i].PerTxMedianNs / at.PerTxMedianNs,
			})
		}
		r.ColdRatios = ratios
	}
	if r.EBs != 128 || r.TxsPerEB != 15_058 || r.TxCapacity != txcache.DefaultTxCapacity {
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
	if r.ColdRatios != nil {
		v := r.ColdRatios.CacheOverFloor
		add("txcache cold per-EB lookup over the memory floor (medians per tx)", "≤ 2.5", v, "×", v <= 2.5)
	}
	v := worst(cache, perTx)
	add("txcache warm lookup, per tx of the median batch (worst ratio)", "≤ 20", v, "ns", v <= 20)
	v = least(func(c comparison) float64 { return c.MapOverCache })
	add("txcache warm faster than the map (least ratio)", "≥ 3", v, "×", v >= 3)
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

// write prints the report: the set-up, the populations, the cold path
// beside the floor, the warm lookups per structure with their sorted batch
// times, the warm side by side, and the targets.
func (r *txcacheReport) Write(out io.Writer) {
	fmt.Fprintln(out, "LeiosTxCache benchmark")
	r.Machine.Write(out)
	fmt.Fprintf(out, "EBs in index : %d\ntxs per EB   : %d\ntotal txs    : %d\n", r.EBs, r.TxsPerEB, r.TotalTxs)
	r.writeHugePages(out)

	fmt.Fprintf(out, "\n== population (both sized for all txs and faulted in before the timing) ==\n")
	for _, s := range r.Structures {
		if s.Population != nil {
			fmt.Fprintf(out, "%s: %s\n", s.Name, s.What)
			writePopulation(out, s.Population)
		}
	}

	if len(r.Cold) > 0 {
		r.writeCold(out)
	}

	fmt.Fprintf(out, "\n== warm: one batch per hit ratio, looked up again and again ==\n")
	for _, s := range r.Structures {
		fmt.Fprintf(out, "\n%s: %s\n", s.Name, s.What)
		writeLookups(out, s.Lookups, r.Batches)
	}

	fmt.Fprintf(out, "\n== warm side by side: per-tx time of the median batch ==\n")
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
			fmt.Fprintf(out, "%-66s %6s %-3s  measured %8.2f %-3s  %s\n", t.What, t.Bound, t.Unit, t.Measured, t.Unit, verdict)
		}
	}
}

func (r *txcacheReport) writeHugePages(out io.Writer) {
	huge := func(n int64) string {
		if n < 0 {
			return "unknown"
		}
		return fmtBytes(n)
	}
	table := int64(0)
	if s := r.structure(nameCache); s != nil && s.Population != nil {
		table = s.Population.TableBytes
	}
	fmt.Fprintf(out, "transparent huge pages: %s; huge pages backing the populated table: %s of %s, the cold path's table: %s, the floor's array: %s\n",
		r.HugePages.Mode, huge(r.HugePages.TableBytes), fmtBytes(table), huge(r.HugePages.ColdTableBytes), huge(r.HugePages.FloorBytes))
	llc := "unknown"
	if r.LLCBytes > 0 {
		llc = fmtBytes(int64(r.LLCBytes))
	}
	fmt.Fprintf(out, "last-level cache %s; the cold path evicts it by reading %s\n", llc, fmtBytes(int64(r.EvictBytes)))
}

// writeCold prints the cold path: per structure the spread of the per-tx
// times over the EBs, then the medians per hit ratio beside the floor.
func (r *txcacheReport) writeCold(out io.Writer) {
	fmt.Fprintf(out, "\n== cold: the node's real path, each EB once, caches evicted before each step ==\n")
	for _, c := range r.Cold {
		fmt.Fprintf(out, "%s: %s\n", c.Name, c.What)
	}
	fmt.Fprintf(out, "\nper tx, over the %d EBs        median      p90      max\n", len(r.Cold[0].Samples))
	for _, c := range r.Cold {
		if c.Insert != nil {
			fmt.Fprintf(out, "  %-26s %8.1f %8.1f %8.1f ns\n", c.Name+" InsertBody", c.Insert.Median, c.Insert.P90, c.Insert.Max)
		}
	}
	for _, c := range r.Cold {
		what := " lookup"
		if c.Name == nameFloor {
			what = " (one load per key)"
		}
		fmt.Fprintf(out, "  %-26s %8.1f %8.1f %8.1f ns\n", c.Name+what, c.Lookup.Median, c.Lookup.P90, c.Lookup.Max)
	}
	if r.ColdRatios == nil {
		return
	}
	fmt.Fprintf(out, "\ncold lookup, median per tx by hit ratio\n%6s %8s %12s %12s %12s %15s %12s\n",
		"hits", "batches", nameCache, nameMap, nameFloor, "txcache/floor", "map/txcache")
	cache, refs, floor := r.cold(nameCache), r.cold(nameMap), r.cold(nameFloor)
	for i, at := range r.ColdRatios.ByHitPct {
		fmt.Fprintf(out, "%5d%% %8d %9.1f ns %9.1f ns %9.1f ns %14.2f× %11.1f×\n", at.HitPct, cache.LookupByHitPct[i].Batches,
			cache.LookupByHitPct[i].PerTxMedianNs, refs.LookupByHitPct[i].PerTxMedianNs, floor.LookupByHitPct[i].PerTxMedianNs,
			at.CacheOverFloor, at.MapOverCache)
	}
	fmt.Fprintf(out, "%6s %8d %9.1f ns %9.1f ns %9.1f ns %14.2f× %11.1f×\n", "all", len(cache.Samples),
		cache.Lookup.Median, refs.Lookup.Median, floor.Lookup.Median, r.ColdRatios.CacheOverFloor, r.ColdRatios.MapOverCache)
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
