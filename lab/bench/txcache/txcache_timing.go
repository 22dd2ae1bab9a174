package txcache

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// population is how long filling a structure took and what it holds.
type population struct {
	TimeNs     int64 `json:"time_ns"`
	HeapBytes  int64 `json:"heap_bytes,omitempty"`  // growth of the heap in use, after runtime.GC
	TableBytes int64 `json:"table_bytes,omitempty"` // txcache: its table (Stats.TableBytes)
	DiskBytes  int64 `json:"disk_bytes,omitempty"`  // leiosdb: its files
	Reused     bool  `json:"reused,omitempty"`      // leiosdb: populated by an earlier run
}

// lookupResult is one hit ratio's timed batches.
type lookupResult struct {
	HitPct  int     `json:"hit_pct"`
	Hits    int     `json:"hits"`
	Txs     int     `json:"txs"`
	BatchNs []int64 `json:"batch_ns"` // ascending
	AvgNs   float64 `json:"avg_ns"`
	// MedianNs is the median batch; with an even count, the mean of the
	// middle two.
	MedianNs      float64 `json:"median_ns"`
	PerTxAvgNs    float64 `json:"per_tx_avg_ns"`
	PerTxMedianNs float64 `json:"per_tx_median_ns"`
}

// timeBatches runs one warm-up and then n timed batches of run, which must
// report want hits every time (no false hits, and in this workload no false
// misses either). prepare, if set, runs untimed before each batch.
func timeBatches(n, txs, hitPct, want int, prepare func() error, run func() (int, error)) (lookupResult, error) {
	runtime.GC() // not during the batches, if it can be helped
	times := make([]int64, 0, n)
	for i := range n + 1 {
		if prepare != nil {
			if err := prepare(); err != nil {
				return lookupResult{}, err
			}
		}
		start := time.Now()
		got, err := run()
		elapsed := time.Since(start)
		if err != nil {
			return lookupResult{}, err
		}
		if got != want {
			return lookupResult{}, fmt.Errorf("%d%% hits: %d held, want %d", hitPct, got, want)
		}
		if i > 0 {
			times = append(times, elapsed.Nanoseconds())
		}
	}
	return newLookupResult(hitPct, want, txs, times), nil
}

func newLookupResult(hitPct, hits, txs int, times []int64) lookupResult {
	slices.Sort(times)
	r := lookupResult{HitPct: hitPct, Hits: hits, Txs: txs, BatchNs: times}
	if len(times) == 0 {
		return r
	}
	var sum float64
	for _, t := range times {
		sum += float64(t)
	}
	r.AvgNs = sum / float64(len(times))
	mid := len(times) / 2
	r.MedianNs = float64(times[mid])
	if len(times)%2 == 0 {
		r.MedianNs = (float64(times[mid-1]) + float64(times[mid])) / 2
	}
	r.PerTxAvgNs = r.AvgNs / float64(max(txs, 1))
	r.PerTxMedianNs = r.MedianNs / float64(max(txs, 1))
	return r
}
