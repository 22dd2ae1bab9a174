package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/internal/benchkeys"
	"github.com/leiosnode/leiosnode/txcache"
)

// txcacheFlags are the flags of leiosbench txcache.
type txcacheFlags struct {
	ebs      int
	txsPerEB int
	batches  int
	skipDB   bool
	dbDir    string
	json     bool
}

func newTxcacheCommand() *cobra.Command {
	var f txcacheFlags
	cmd := &cobra.Command{
		Use:   "txcache",
		Short: "The LeiosTxCache against a Go map and a LeiosDB probe: population and EB-batch lookups",
		Long: `The LeiosTxCache benchmark, three structures in one run.

EBS EBs of TXS txs each, pairwise disjoint (128 × 15,058 = 1,927,424 txs by
default; --txs-per-eb 3011 for the smaller variant), are loaded into
  - the LeiosTxCache (txcache), EB by EB: announcement, body, marks;
  - a plain Go map[[32]byte]uint64 doing the same two passes;
  - a LeiosDB on Pebble (point, body, txs), unless --skip-db.
Population is timed, with the heap in use after runtime.GC. Then one EB-sized
batch is looked up at hit ratios 0..100 % (position i is a hit when
i mod 5 < pct/20): 1 warm-up and BATCHES timed batches each — the cache's
LookupTxs, the map, and the LeiosDB's HasTxs warm and cold (before each cold
batch, outside the timing: close, fadvise DONTNEED on its files, reopen).

Each tx is 64 bytes made from a splitmix64 key; its Blake2b-256 hash is its
key in all three structures. Populating the LeiosDB takes minutes: --db-dir
keeps it for later runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			report, err := runTxcacheBench(f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), report, f.json)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.ebs, "ebs", txcache.DefaultMaxAnnouncements, "EBs indexed (at most the cache's 128 announcements)")
	fs.IntVar(&f.txsPerEB, "txs-per-eb", 15_058, "txs per EB (the smaller variant: 3011)")
	fs.IntVar(&f.batches, "batches", 20, "timed lookup batches per hit ratio, after one warm-up")
	fs.BoolVar(&f.skipDB, "skip-db", false, "leave out the LeiosDB (a quick run)")
	fs.StringVar(&f.dbDir, "db-dir", "", "keep the LeiosDB here and reuse it if a run with the same shape populated it (default: a temporary directory, removed after)")
	fs.BoolVar(&f.json, "json", false, "print one JSON document instead of the tables")
	return cmd
}

func (f txcacheFlags) validate() error {
	switch {
	case f.ebs < 1 || f.ebs > txcache.DefaultMaxAnnouncements:
		return fmt.Errorf("--ebs %d: want 1..%d", f.ebs, txcache.DefaultMaxAnnouncements)
	case f.txsPerEB < 1 || f.txsPerEB >= benchkeys.MaxTxsPerEB:
		return fmt.Errorf("--txs-per-eb %d: want 1..%d", f.txsPerEB, benchkeys.MaxTxsPerEB-1)
	case f.batches < 1:
		return fmt.Errorf("--batches %d: want at least 1", f.batches)
	}
	return nil
}

// The names of the measured structures, in the order of the tables.
const (
	nameCache  = "txcache"
	nameMap    = "map"
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
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
	}
	step := func(what string) func() {
		fmt.Fprintf(progress, "%s...", what)
		start := time.Now()
		return func() { fmt.Fprintf(progress, " done in %s\n", fmtDuration(time.Since(start))) }
	}

	done := step("generating data")
	w := newWorkload(f.ebs, f.txsPerEB)
	done()

	done = step("populating the txcache")
	cache, cachePop, err := populateCache(w)
	if err != nil {
		return nil, err
	}
	done()
	done = step("populating the map")
	refs, mapPop := populateMap(w)
	done()

	cacheRes := structure{Name: nameCache, Population: &cachePop,
		What: fmt.Sprintf("LeiosTxCache, LookupTxs (%d-slot table)", cache.Stats().TxCapacity)}
	mapRes := structure{Name: nameMap, Population: &mapPop, What: "Go map[[32]byte]uint64"}
	done = step("timing lookups in the txcache and the map")
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
	cache, refs = nil, nil // free them for the LeiosDB's page cache
	runtime.GC()

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
