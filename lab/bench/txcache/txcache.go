// Package txcache is leiosbench txcache: the LeiosTxCache beside its
// baselines — a Go map, the memory floor (one random load per key into an
// array as large as its table) and a LeiosDB probe — through population,
// the node's cold path and warm lookups at each hit ratio.
//
// Invariants: the cache and its baselines see the same keys in the same
// order, and the CPU caches are evicted before each cold step; every
// figure of the tables is in the JSON report.
// It never builds a node; only the LeiosDB probe touches disk.
package txcache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/internal/benchkeys"
	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/txcache"
)

// txcacheFlags are the flags of leiosbench txcache.
type txcacheFlags struct {
	ebs        int
	txsPerEB   int
	batches    int
	capacity   int
	evictBytes int
	skipDB     bool
	dbDir      string
	quick      bool
	out        output.Flags
}

// NewCommand is the txcache command.
func NewCommand() *cobra.Command {
	var f txcacheFlags
	cmd := &cobra.Command{
		Use:   "txcache",
		Short: "The LeiosTxCache against a Go map, the memory floor and a LeiosDB probe",
		Long: `The LeiosTxCache benchmark: the cache, a Go map, the memory floor and a
LeiosDB probe, in one run.

EBS EBs of TXS txs each, pairwise disjoint (128 × 15,058 = 1,927,424 txs by
default), as the node meets them:

  population  every EB into an empty cache (announcement, InsertBody, then
              its txs marked inserted), timed end to end; the same two
              passes into a Go map[[32]byte]uint64. Both are sized for all
              txs and faulted in before the timing.
  cold        the node's real path, on a fresh cache and map: for each EB
              once, InsertBody (returning the txs to fetch), the marks, then
              LookupTxs of a batch no one looked up before, the CPU caches
              evicted before each timed step by reading a buffer twice the
              last-level cache. Beside them the memory floor: one independent
              random 8-byte load per key of the same batches into an array
              as large as the table, with the table's page size.
  warm        one batch per hit ratio looked up again and again: 1 warm-up
              and BATCHES timed (position i is a hit when i mod 5 < pct/20).
  leiosdb     the LeiosDB's HasTxs on the warm batches, warm and cold
              (closed, page cache dropped, reopened before each batch),
              unless --skip-db.

Each tx is 64 bytes made from a splitmix64 key; its Blake2b-256 hash is its
key everywhere. The report says which transparent huge page mode the
kernel runs and how much of the table and of the floor's array got huge
pages. Populating the LeiosDB takes minutes: --db-dir keeps it for later
runs. The plot (txcache.png in --plots) shows the per-tx time of every
batch: warm, cold and the floor.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.quick {
				f.applyQuick(cmd)
			}
			if err := f.validate(); err != nil {
				return err
			}
			if err := f.out.MakePlotsDir(); err != nil {
				return err
			}
			report, err := runTxcacheBench(f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return f.out.Emit(cmd, report, map[string]func(string) error{
				"txcache.png": func(path string) error { return plotTxcache(report, path) },
			})
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.ebs, "ebs", txcache.DefaultMaxAnnouncements, "EBs indexed (at most the cache's 128 announcements)")
	fs.IntVar(&f.txsPerEB, "txs-per-eb", 15_058, "txs per EB (the smaller variant: 3011)")
	fs.IntVar(&f.batches, "batches", 20, "timed warm lookup batches per hit ratio, after one warm-up")
	fs.IntVar(&f.capacity, "tx-capacity", txcache.DefaultTxCapacity, "slots of the cache's table (the floor's array is as large)")
	fs.IntVar(&f.evictBytes, "evict-bytes", defaultEvictBytes(), "bytes read to evict the CPU caches before a cold step (default: twice the last-level cache)")
	fs.BoolVar(&f.skipDB, "skip-db", false, "leave out the LeiosDB")
	fs.StringVar(&f.dbDir, "db-dir", "", "keep the LeiosDB here and reuse it if a run with the same shape populated it (default: a temporary directory, removed after)")
	fs.BoolVar(&f.quick, "quick", false, "a run of seconds: 128 EBs × 1,000 txs in a table of 512 Ki slots, 5 batches, no LeiosDB (explicit flags win)")
	f.out.Register(fs)
	return cmd
}

// applyQuick shrinks the run, leaving flags given explicitly as they are.
func (f *txcacheFlags) applyQuick(cmd *cobra.Command) {
	set := func(name string, apply func()) { output.UnlessGiven(cmd, name, apply) }
	set("txs-per-eb", func() { f.txsPerEB = 1_000 })
	set("tx-capacity", func() { f.capacity = 1 << 19 })
	set("batches", func() { f.batches = 5 })
	set("skip-db", func() { f.skipDB = true })
}

func (f txcacheFlags) validate() error {
	switch {
	case f.ebs < 1 || f.ebs > txcache.DefaultMaxAnnouncements:
		return fmt.Errorf("--ebs %d: want 1..%d", f.ebs, txcache.DefaultMaxAnnouncements)
	case f.txsPerEB < 1 || f.txsPerEB >= benchkeys.MaxTxsPerEB:
		return fmt.Errorf("--txs-per-eb %d: want 1..%d", f.txsPerEB, benchkeys.MaxTxsPerEB-1)
	case f.batches < 1:
		return fmt.Errorf("--batches %d: want at least 1", f.batches)
	case f.capacity < f.ebs*f.txsPerEB*4/3:
		return fmt.Errorf("--tx-capacity %d: want at least 4/3 of the %d txs (a load of 0.75 at most)", f.capacity, f.ebs*f.txsPerEB)
	case f.evictBytes < 1<<20:
		return fmt.Errorf("--evict-bytes %d: want at least 1 MiB", f.evictBytes)
	}
	return nil
}

// The names of the measured structures, in the order of the tables.
const (
	nameCache  = "txcache"
	nameMap    = "map"
	nameFloor  = "floor"
	nameDBWarm = "leiosdb-warm"
	nameDBCold = "leiosdb-cold"
)

// runTxcacheBench measures everything, writing progress to progress.
func runTxcacheBench(f txcacheFlags, progress io.Writer) (*txcacheReport, error) {
	report := &txcacheReport{
		EBs:        f.ebs,
		TxsPerEB:   f.txsPerEB,
		TotalTxs:   f.ebs * f.txsPerEB,
		Batches:    f.batches,
		TxCapacity: f.capacity,
		Machine:    machine.Describe(),
		LLCBytes:   lastLevelCacheBytes(),
		EvictBytes: f.evictBytes,
		HugePages:  hugePages{Mode: transparentHugePageMode()},
	}
	step := func(what string) func() {
		fmt.Fprintf(progress, "%s...", what)
		start := time.Now()
		return func() { fmt.Fprintf(progress, " done in %s\n", fmtDuration(time.Since(start))) }
	}

	done := step("generating data")
	w := newWorkload(f.ebs, f.txsPerEB)
	done()

	// Every large structure is made now, from memory fresh from the kernel,
	// so each gets huge pages if the kernel has them; memory a freed
	// structure left behind would come back in whatever pages it had.
	done = step("allocating the structures")
	cache, cacheHeap, huge := newCache(f.capacity)
	report.HugePages.TableBytes = huge
	refs, mapHeap := newRefMap(w.total())
	coldCache, _, huge := newCache(f.capacity)
	report.HugePages.ColdTableBytes = huge
	coldRefs, _ := newRefMap(w.total())
	var floor *memoryFloor
	report.HugePages.FloorBytes = hugeGrowth(func() { floor = newMemoryFloor(coldCache.Stats().TableBytes) })
	ev := newEvictor(f.evictBytes)
	done()

	done = step("populating the txcache")
	cachePop, err := populateCache(cache, w, cacheHeap)
	if err != nil {
		return nil, err
	}
	done()
	done = step("populating the map")
	mapPop := populateMap(refs, w, mapHeap)
	done()

	cacheRes := structure{Name: nameCache, Population: &cachePop,
		What: fmt.Sprintf("LeiosTxCache, LookupTxs (%d-slot table)", cache.Stats().TxCapacity)}
	mapRes := structure{Name: nameMap, Population: &mapPop, What: "Go map[[32]byte]uint64"}
	done = step("timing warm lookups in the txcache and the map")
	states := make([]txcache.TxState, f.txsPerEB)
	for r, pct := range hitRatios {
		batch, want := w.batches[r], w.hits[r]
		// The two interleave by ratio, so that load from elsewhere on a
		// shared machine hits both alike.
		res, err := timeBatches(f.batches, len(batch), pct, want, nil, func() (int, error) {
			return cache.LookupTxs(batch, states), nil
		})
		if err != nil {
			return nil, fmt.Errorf("txcache: %w", err)
		}
		cacheRes.Lookups = append(cacheRes.Lookups, res)
		if res, err = timeBatches(f.batches, len(batch), pct, want, nil, func() (int, error) {
			return refs.held(batch), nil
		}); err != nil {
			return nil, fmt.Errorf("map: %w", err)
		}
		mapRes.Lookups = append(mapRes.Lookups, res)
	}
	done()
	report.Structures = append(report.Structures, cacheRes, mapRes)

	done = step(fmt.Sprintf("the cold path, EB by EB (caches evicted by reading %s before each step):", fmtBytes(int64(f.evictBytes))))
	if report.Cold, err = runColdPath(w, coldCache, coldRefs, floor, ev, progress); err != nil {
		return nil, err
	}
	done()
	runtime.KeepAlive(cache)
	runtime.KeepAlive(refs)
	cache, refs, coldCache, coldRefs, floor, ev = nil, nil, nil, nil, nil, nil
	runtime.GC() // free them for the LeiosDB's page cache

	if !f.skipDB {
		measured, err := benchLeiosDB(f, w, progress)
		if err != nil {
			return nil, fmt.Errorf("leiosdb: %w", err)
		}
		report.Structures = append(report.Structures, measured...)
	}
	report.compare()
	return report, nil
}

// benchLeiosDB populates (or reuses) the store and times its probes, warm
// and then cold. Where the page cache cannot be dropped (not Linux), the
// cold probe is left out.
func benchLeiosDB(f txcacheFlags, w *workload, progress io.Writer) ([]structure, error) {
	dir := f.dbDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "leiosbench-txcache-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	p, pop, reused, err := openProbeDB(dir, w, progress)
	if err != nil {
		return nil, err
	}
	defer p.close()
	pop.Reused = reused
	warm := structure{Name: nameDBWarm, Population: &pop, What: "LeiosDB (Pebble) HasTxs, warm"}
	cold := structure{Name: nameDBCold,
		What: "LeiosDB HasTxs, cold: closed, page cache dropped (fadvise DONTNEED), reopened before each batch"}
	out := make([]bool, w.txsPerEB)

	fmt.Fprintf(progress, "timing warm LeiosDB probes...")
	start := time.Now()
	for r, pct := range hitRatios {
		batch := w.batches[r]
		res, err := timeBatches(f.batches, len(batch), pct, w.hits[r], nil, func() (int, error) {
			return p.probe(batch, out)
		})
		if err != nil {
			return nil, err
		}
		warm.Lookups = append(warm.Lookups, res)
	}
	fmt.Fprintf(progress, " done in %s\n", fmtDuration(time.Since(start)))

	if err := p.coldStart(); errors.Is(err, errors.ErrUnsupported) {
		fmt.Fprintf(progress, "no cold LeiosDB probes: %v\n", err)
		return []structure{warm}, p.reopen()
	} else if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "timing cold LeiosDB probes...")
	start = time.Now()
	for r, pct := range hitRatios {
		batch := w.batches[r]
		res, err := timeBatches(f.batches, len(batch), pct, w.hits[r], p.coldStart, func() (int, error) {
			return p.probe(batch, out)
		})
		if err != nil {
			return nil, err
		}
		cold.Lookups = append(cold.Lookups, res)
	}
	fmt.Fprintf(progress, " done in %s\n", fmtDuration(time.Since(start)))
	return []structure{warm, cold}, nil
}
