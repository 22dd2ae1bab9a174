package txcache

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/benchkeys"
	"github.com/leiosnode/leiosnode/txcache"
)

// The node's real path, cold: each EB arrives once; its body goes into the
// cache (InsertBody, which returns the txs still to fetch), its txs are
// marked once fetched, and then the fetch logic looks up a batch no one
// looked up before. Before each timed step the CPU caches are evicted, so
// every step starts as the node's would after unrelated work. The map does
// the same steps, and the memory floor loads once per key of the same
// batches.

// coldSample is one EB's timed steps.
type coldSample struct {
	EB       int   `json:"eb"`
	HitPct   int   `json:"hit_pct"` // of the lookup batch
	InsertNs int64 `json:"insert_ns,omitempty"`
	LookupNs int64 `json:"lookup_ns"`
}

// coldRun is one structure's cold path.
type coldRun struct {
	Name    string       `json:"name"`
	What    string       `json:"what"`
	Txs     int          `json:"txs_per_batch"`
	Samples []coldSample `json:"samples"` // in EB order
	// Summaries of the per-tx times (ns) over all EBs.
	Insert *spread `json:"insert_per_tx_ns,omitempty"`
	Lookup spread  `json:"lookup_per_tx_ns"`
	// LookupByHitPct is the median per-tx lookup time at each hit ratio.
	LookupByHitPct []hitMedian `json:"lookup_by_hit_pct"`
}

// spread summarizes per-tx times.
type spread struct {
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
}

type hitMedian struct {
	HitPct        int     `json:"hit_pct"`
	Batches       int     `json:"batches"`
	PerTxMedianNs float64 `json:"per_tx_median_ns"`
}

func newSpread(xs []float64) spread {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if len(xs) == 0 {
		return spread{}
	}
	return spread{Median: quantile(xs, 0.5), P90: quantile(xs, 0.9), Max: xs[len(xs)-1]}
}

// quantile of sorted xs, the nearest rank.
func quantile(sorted []float64, q float64) float64 {
	i := int(q*float64(len(sorted)) + 0.5)
	return sorted[min(max(i, 1), len(sorted))-1]
}

// summarize fills the summaries from the samples.
func (r *coldRun) summarize() {
	var ins, look []float64
	byPct := map[int][]float64{}
	for _, s := range r.Samples {
		perTx := float64(s.LookupNs) / float64(r.Txs)
		look = append(look, perTx)
		byPct[s.HitPct] = append(byPct[s.HitPct], perTx)
		if s.InsertNs > 0 {
			ins = append(ins, float64(s.InsertNs)/float64(r.Txs))
		}
	}
	r.Lookup = newSpread(look)
	if len(ins) > 0 {
		sp := newSpread(ins)
		r.Insert = &sp
	}
	r.LookupByHitPct = nil
	for _, pct := range hitRatios {
		if xs := byPct[pct]; len(xs) > 0 {
			r.LookupByHitPct = append(r.LookupByHitPct, hitMedian{pct, len(xs), newSpread(xs).Median})
		}
	}
}

// coldBatch is the lookup batch after EB eb: position i is a hit at the
// batch's ratio (benchkeys.IsHit), a tx drawn at random from EBs 0..eb (all
// inserted and marked by then); else a key no EB holds, never looked up
// before. It returns the number of hits.
func coldBatch(w *workload, eb, pct int, batch []block.Hash) int {
	state := uint64(eb)<<32 | 0xc01d
	hits := 0
	for i := range batch {
		if benchkeys.IsHit(i, pct) {
			r := benchkeys.SplitMix64(&state)
			batch[i] = w.hashes[r%uint64(eb+1)][(r>>32)%uint64(w.txsPerEB)]
			hits++
			continue
		}
		batch[i] = benchkeys.FreshMissKey(eb, i)
	}
	return hits
}

// runColdPath times the cold path for the txcache, the map and the floor,
// interleaved EB by EB so that load from elsewhere on the machine falls on
// all three alike.
func runColdPath(w *workload, cache *txcache.Cache, refs refMap, floor *memoryFloor, ev *evictor, progress io.Writer) ([]coldRun, error) {
	cacheRun := coldRun{Name: nameCache, Txs: w.txsPerEB,
		What: "LeiosTxCache: InsertBody of each EB once, then LookupTxs of a fresh batch, caches evicted before each"}
	mapRun := coldRun{Name: nameMap, Txs: w.txsPerEB,
		What: "Go map: the same two steps, caches evicted before each"}
	floorRun := coldRun{Name: nameFloor, Txs: w.txsPerEB,
		What: fmt.Sprintf("memory floor: one independent random 8-byte load per key into %s, caches evicted before each batch", fmtBytes(int64(len(floor.words)*8)))}
	batch := make([]block.Hash, w.txsPerEB)
	states := make([]txcache.TxState, w.txsPerEB)
	var missing []int
	timed := func(step func()) int64 {
		ev.evict()
		start := time.Now()
		step()
		return time.Since(start).Nanoseconds()
	}
	for eb := range w.ebs {
		if eb%32 == 0 {
			fmt.Fprintf(progress, " %d", eb)
		}
		pct := hitRatios[eb%len(hitRatios)]
		hits := coldBatch(w, eb, pct, batch)
		if !cache.InsertAnnouncement(uint64(eb), benchkeys.RBHash(eb), benchkeys.EBHash(eb)) {
			return nil, fmt.Errorf("txcache: announcement of EB %d not held", eb)
		}

		var err error
		c := coldSample{EB: eb, HitPct: pct}
		c.InsertNs = timed(func() { missing, err = cache.InsertBody(benchkeys.EBHash(eb), w.bodies[eb]) })
		if err != nil {
			return nil, fmt.Errorf("txcache: body of EB %d: %w", eb, err)
		}
		if len(missing) != w.txsPerEB {
			return nil, fmt.Errorf("txcache: EB %d: %d txs missing, want all %d", eb, len(missing), w.txsPerEB)
		}
		cache.MarkInserted(w.hashes[eb])
		m := coldSample{EB: eb, HitPct: pct}
		m.InsertNs = timed(func() { missing = refs.insertBody(w.bodies[eb], missing[:0]) })
		if len(missing) != w.txsPerEB {
			return nil, fmt.Errorf("map: EB %d: %d txs missing, want all %d", eb, len(missing), w.txsPerEB)
		}
		refs.markInserted(w.hashes[eb])

		var held int
		c.LookupNs = timed(func() { held = cache.LookupTxs(batch, states) })
		if held != hits {
			return nil, fmt.Errorf("txcache: lookup after EB %d: %d held, want %d", eb, held, hits)
		}
		m.LookupNs = timed(func() { held = refs.held(batch) })
		if held != hits {
			return nil, fmt.Errorf("map: lookup after EB %d: %d held, want %d", eb, held, hits)
		}
		f := coldSample{EB: eb, HitPct: pct, LookupNs: timed(func() { floor.loadEach(batch) })}

		cacheRun.Samples = append(cacheRun.Samples, c)
		mapRun.Samples = append(mapRun.Samples, m)
		floorRun.Samples = append(floorRun.Samples, f)
	}
	runs := []coldRun{cacheRun, mapRun, floorRun}
	for i := range runs {
		runs[i].summarize()
	}
	return runs, nil
}
