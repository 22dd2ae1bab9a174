package txcache

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/internal/benchkeys"
	"github.com/leiosnode/leiosnode/lab/bench/benchtest"
	"github.com/leiosnode/leiosnode/lab/bench/output"
)

// runTxcache runs the command with args and returns its standard output.
func runTxcache(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := benchtest.Execute(NewCommand(), args...)
	return out, err
}

// runTxcacheJSON runs the command writing its JSON report and plots into a
// temporary directory, and returns the report read back.
func runTxcacheJSON(t *testing.T, args ...string) (*txcacheReport, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "txcache.json")
	if _, err := runTxcache(t, append(args, "--json", path, "--plots", dir)...); err != nil {
		t.Fatal(err)
	}
	var r txcacheReport
	if err := output.ReadJSON(path, &r); err != nil {
		t.Fatal(err)
	}
	return &r, dir
}

// smallTable keeps the tests' tables (and the floor's array) small, yet
// large enough (6.7 MB) that the heap growth the population reports is the
// table's and not the runtime's other traffic, which moves the process's
// heap by several hundred KB between two measurements.
var smallTable = []string{"--tx-capacity", "131072", "--evict-bytes", "4194304"}

// A small run with the LeiosDB: all four structures, every ratio with the
// right hits and sorted batch times, a reused store on the second run, and a
// store of another shape refused.
func TestTxcacheCommandWithLeiosDB(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cold probe drops the page cache, which needs Linux")
	}
	const ebs, txs, batches = 3, 40, 3
	dir := t.TempDir()
	args := append([]string{"--ebs", "3", "--txs-per-eb", "40", "--batches", "3", "--db-dir", dir}, smallTable...)
	r, _ := runTxcacheJSON(t, args...)

	if r.EBs != ebs || r.TxsPerEB != txs || r.TotalTxs != ebs*txs || r.Batches != batches {
		t.Fatalf("shape %d × %d = %d, %d batches", r.EBs, r.TxsPerEB, r.TotalTxs, r.Batches)
	}
	var names []string
	for _, s := range r.Structures {
		names = append(names, s.Name)
		if len(s.Lookups) != len(hitRatios) {
			t.Fatalf("%s: %d lookups, want %d", s.Name, len(s.Lookups), len(hitRatios))
		}
		for i, l := range s.Lookups {
			if l.HitPct != hitRatios[i] || l.Hits != benchkeys.Hits(txs, l.HitPct) || l.Txs != txs {
				t.Fatalf("%s: lookup %+v", s.Name, l)
			}
			if len(l.BatchNs) != batches || !slices.IsSorted(l.BatchNs) || l.BatchNs[0] <= 0 {
				t.Fatalf("%s %d%%: batch times %v", s.Name, l.HitPct, l.BatchNs)
			}
		}
	}
	if want := []string{nameCache, nameMap, nameDBWarm, nameDBCold}; !slices.Equal(names, want) {
		t.Fatalf("structures %v, want %v", names, want)
	}
	cache, db := r.structure(nameCache).Population, r.structure(nameDBWarm).Population
	if cache.TimeNs <= 0 || cache.TableBytes <= 0 || cache.HeapBytes < cache.TableBytes/2 {
		t.Fatalf("txcache population %+v", cache)
	}
	if db.Reused || db.TimeNs <= 0 || db.DiskBytes <= 0 {
		t.Fatalf("first LeiosDB population %+v", db)
	}
	if len(r.Comparison) != len(hitRatios) || r.Comparison[0].MapOverCache <= 0 || r.Comparison[0].DBWarmOverCache <= 0 {
		t.Fatalf("comparison %+v", r.Comparison)
	}
	if len(r.Targets) != 0 {
		t.Fatalf("targets judged at a shape they are not for: %+v", r.Targets)
	}

	again, _ := runTxcacheJSON(t, args...)
	if p := again.structure(nameDBWarm).Population; !p.Reused {
		t.Fatalf("second run did not reuse the store: %+v", p)
	}
	if _, err := runTxcache(t, append([]string{"--ebs", "2", "--txs-per-eb", "40", "--batches", "1", "--db-dir", dir}, smallTable...)...); err == nil ||
		!strings.Contains(err.Error(), "another population") {
		t.Fatalf("a store of another shape was not refused: %v", err)
	}
}

// The text report of a quick run has the expected shape.
func TestTxcacheCommandText(t *testing.T) {
	out, err := runTxcache(t, append([]string{"--ebs", "2", "--txs-per-eb", "25", "--batches", "2", "--skip-db", "--plots", ""}, smallTable...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"EBs in index : 2", "total txs    : 50", "transparent huge pages:", "last-level cache",
		"== population", "txcache: LeiosTxCache", "map: Go map", "population:",
		"== cold: the node's real path", "txcache InsertBody", "floor (one load per key)", "txcache/floor",
		"== warm:", "lookup — EB batch of 25 (x2 each",
		"  0% hits (0/25)", "100% hits (25/25)", "batch durations (ascending per column; 2 rows x 6 ratios)",
		"== warm side by side",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "leiosdb") {
		t.Errorf("--skip-db output mentions the LeiosDB:\n%s", out)
	}
}

func TestTxcacheFlagsValidate(t *testing.T) {
	ok := txcacheFlags{ebs: 128, txsPerEB: 15_058, batches: 20, capacity: 1 << 22, evictBytes: 64 << 20}
	for _, tc := range []struct {
		name  string
		edit  func(*txcacheFlags)
		valid bool
	}{
		{"defaults", func(*txcacheFlags) {}, true},
		{"one EB", func(f *txcacheFlags) { f.ebs = 1 }, true},
		{"no EBs", func(f *txcacheFlags) { f.ebs = 0 }, false},
		{"more EBs than announcements", func(f *txcacheFlags) { f.ebs = 129 }, false},
		{"no txs", func(f *txcacheFlags) { f.txsPerEB = 0 }, false},
		{"txs past the key space", func(f *txcacheFlags) { f.txsPerEB = benchkeys.MaxTxsPerEB }, false},
		{"no batches", func(f *txcacheFlags) { f.batches = 0 }, false},
		{"a table too small", func(f *txcacheFlags) { f.capacity = 2_000_000 }, false},
		{"a tiny evictor", func(f *txcacheFlags) { f.evictBytes = 4096 }, false},
	} {
		f := ok
		tc.edit(&f)
		if err := f.validate(); (err == nil) != tc.valid {
			t.Errorf("%s: validate() = %v", tc.name, err)
		}
	}
}

func TestNewLookupResult(t *testing.T) {
	for _, tc := range []struct {
		times        []int64
		avg, median  float64
		perTxMedian  float64
		sortedBatch0 int64
	}{
		{[]int64{30, 10, 20}, 20, 20, 2, 10},
		{[]int64{40, 10, 30, 20}, 25, 25, 2.5, 10},
		{[]int64{7}, 7, 7, 0.7, 7},
	} {
		r := newLookupResult(100, 10, 10, slices.Clone(tc.times))
		if r.AvgNs != tc.avg || r.MedianNs != tc.median || r.PerTxMedianNs != tc.perTxMedian ||
			r.BatchNs[0] != tc.sortedBatch0 || !slices.IsSorted(r.BatchNs) {
			t.Errorf("%v: got %+v", tc.times, r)
		}
	}
}

func TestFmtDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{999, "999 ns"},
		{358_670, "358.67 µs"},
		{1_750_000, "1.75 ms"},
		{1_620_000_000, "1.62 s"},
	} {
		if got := fmtDuration(tc.d); got != tc.want {
			t.Errorf("fmtDuration(%d) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// The workload's batches hit exactly the newest EB's txs at the hit
// positions, and miss keys hash no stored tx.
func TestWorkload(t *testing.T) {
	w := newWorkload(3, 50)
	stored := map[[32]byte]bool{}
	for eb := range w.ebs {
		for i, tx := range w.bodies[eb] {
			if stored[tx.TxHash] {
				t.Fatalf("EB %d tx %d repeats a hash", eb, i)
			}
			stored[tx.TxHash] = true
			if tx.TxHash != w.hashes[eb][i] || int(tx.Size) != len(txOf(eb, i)) {
				t.Fatalf("EB %d tx %d: entry %+v", eb, i, tx)
			}
		}
	}
	for r, pct := range hitRatios {
		for i, h := range w.batches[r] {
			if hit := benchkeys.IsHit(i, pct); stored[h] != hit || hit && h != w.hashes[2][i] {
				t.Fatalf("%d%% position %d: stored %v, hit %v", pct, i, stored[h], hit)
			}
		}
		if w.hits[r] != benchkeys.Hits(50, pct) {
			t.Fatalf("%d%%: %d hits", pct, w.hits[r])
		}
	}
}

// The quick mode end to end (with smaller EBs and evictor, so the race
// detector's runs stay short): every step of the cold path for every
// structure, the summaries and ratios beside the floor, the huge page
// state, the plot.
func TestTxcacheQuick(t *testing.T) {
	r, dir := runTxcacheJSON(t, "--quick", "--txs-per-eb", "200", "--evict-bytes", "4194304")
	if r.EBs != 128 || r.TxsPerEB != 200 || r.TxCapacity != 1<<19 || r.Batches != 5 {
		t.Fatalf("quick shape: %d × %d in %d slots, %d batches", r.EBs, r.TxsPerEB, r.TxCapacity, r.Batches)
	}
	if r.HugePages.Mode == "" || r.Machine.CPUs < 1 || r.EvictBytes != 4<<20 {
		t.Fatalf("set-up %+v %+v, evict %d", r.HugePages, r.Machine, r.EvictBytes)
	}
	var names []string
	for _, c := range r.Cold {
		names = append(names, c.Name)
		if len(c.Samples) != r.EBs || c.Txs != r.TxsPerEB || len(c.LookupByHitPct) != len(hitRatios) {
			t.Fatalf("%s: %d samples of %d txs, %d ratios", c.Name, len(c.Samples), c.Txs, len(c.LookupByHitPct))
		}
		for i, s := range c.Samples {
			if s.EB != i || s.HitPct != hitRatios[i%len(hitRatios)] || s.LookupNs <= 0 || (c.Name == nameFloor) != (s.InsertNs == 0) {
				t.Fatalf("%s: sample %+v", c.Name, s)
			}
		}
		if c.Lookup.Median <= 0 || c.Lookup.Median > c.Lookup.P90 || c.Lookup.P90 > c.Lookup.Max {
			t.Fatalf("%s: lookup spread %+v", c.Name, c.Lookup)
		}
	}
	if want := []string{nameCache, nameMap, nameFloor}; !slices.Equal(names, want) {
		t.Fatalf("cold runs %v, want %v", names, want)
	}
	if cr := r.ColdRatios; cr == nil || cr.CacheOverFloor <= 0 || len(cr.ByHitPct) != len(hitRatios) {
		t.Fatalf("cold ratios %+v", cr)
	}
	if len(r.Targets) != 0 {
		t.Fatalf("targets judged at a shape they are not for: %+v", r.Targets)
	}
	benchtest.CheckPNG(t, filepath.Join(dir, "txcache.png"))
}
