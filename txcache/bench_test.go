package txcache

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/benchkeys"
)

// The benchmark shape of the Haskell LeiosTxCache PR: 128 EBs
// of 15,058 txs, pairwise disjoint.
const benchEBs, benchTxs = DefaultMaxAnnouncements, 15_058

var hitRatios = []int{0, 20, 40, 60, 80, 100}

// populate inserts EBs 0..ebs-1 as the node would: announcement, body, then
// its txs marked inserted. marks is scratch space of len(bodies[i]).
func populate(c *Cache, bodies [][]block.EBTx, marks []block.Hash) {
	for eb, body := range bodies {
		c.InsertAnnouncement(uint64(eb), benchkeys.RBHash(eb), benchkeys.EBHash(eb))
		if _, err := c.InsertBody(benchkeys.EBHash(eb), body); err != nil {
			panic(err)
		}
		for i, tx := range body {
			marks[i] = tx.TxHash
		}
		c.MarkInserted(marks[:len(body)])
	}
}

func benchBodies(ebs, txs int) [][]block.EBTx {
	bodies := make([][]block.EBTx, ebs)
	for eb := range bodies {
		bodies[eb] = benchkeys.EBTxs(eb, txs)
	}
	return bodies
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkPopulate times populating an empty cache with 128 EBs × 15,058
// txs and reports the cache's heap after GC.
func BenchmarkPopulate(b *testing.B) {
	bodies := benchBodies(benchEBs, benchTxs)
	marks := make([]block.Hash, benchTxs)
	var c *Cache
	var heapBefore uint64
	for range b.N {
		b.StopTimer()
		c = nil
		heapBefore = heapInUse()
		c = New(Options{})
		b.StartTimer()
		populate(c, bodies, marks)
	}
	b.StopTimer()
	if s := c.Stats(); s.Txs != benchEBs*benchTxs || s.RefusedInserts != 0 {
		b.Fatalf("populated %+v", s)
	}
	b.ReportMetric(float64(heapInUse()-heapBefore)/(1<<20), "heap-MiB")
	runtime.KeepAlive(bodies) // in heapBefore too
	b.ReportMetric(float64(c.Stats().TableBytes)/(1<<20), "table-MiB")
	runtime.KeepAlive(c)
}

// BenchmarkLookupBatch looks up one EB-sized batch against a populated cache,
// at each hit ratio, and the same against a plain Go map as reference.
func BenchmarkLookupBatch(b *testing.B) {
	bodies := benchBodies(benchEBs, benchTxs)
	c := New(Options{})
	populate(c, bodies, make([]block.Hash, benchTxs))
	reference := make(map[[32]byte]uint64, benchEBs*benchTxs)
	for _, body := range bodies {
		for _, tx := range body {
			reference[tx.TxHash] = uint64(TxInserted)
		}
	}
	bodies = nil
	out := make([]TxState, benchTxs)
	for _, pct := range hitRatios {
		batch := benchkeys.LookupBatch(benchEBs, benchTxs, pct)
		want := benchkeys.Hits(benchTxs, pct)
		b.Run(fmt.Sprintf("cache/hits=%d%%", pct), func(b *testing.B) {
			for b.Loop() {
				if held := c.LookupTxs(batch, out); held != want {
					b.Fatalf("%d held, want %d", held, want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchTxs), "ns/tx")
		})
		b.Run(fmt.Sprintf("map/hits=%d%%", pct), func(b *testing.B) {
			for b.Loop() {
				held := 0
				for _, h := range batch {
					if reference[h] >= uint64(TxInserted) {
						held++
					}
				}
				if held != want {
					b.Fatalf("%d held, want %d", held, want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchTxs), "ns/tx")
		})
	}
}

// BenchmarkLookupBatchCold looks up EB-sized batches no one looked up
// before, with the CPU caches evicted before each (outside the timing), and
// beside it the memory floor: one independent random 8-byte load per key
// into an array as large as the table, in the same pages, measured the
// same way.
func BenchmarkLookupBatchCold(b *testing.B) {
	c := New(Options{})
	populate(c, benchBodies(benchEBs, benchTxs), make([]block.Hash, benchTxs))
	const distinct = 16
	batches := make([][]block.Hash, distinct)
	for i := range batches {
		batches[i] = make([]block.Hash, benchTxs)
		for j := range batches[i] {
			if j%2 == 0 {
				batches[i][j] = benchkeys.TxKey((i*7+j)%benchEBs, j)
			} else {
				batches[i][j] = benchkeys.FreshMissKey(i, j)
			}
		}
	}
	evict := make([]uint64, 64<<20/8) // twice a 32 MiB last-level cache
	for i := range evict {
		evict[i] = uint64(i) // written: untouched pages all map to one zero page
	}
	var sink uint64
	cold := func(b *testing.B, run func(batch []block.Hash)) {
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			for j := 0; j < len(evict); j += 8 {
				sink += evict[j]
			}
			b.StartTimer()
			run(batches[i%distinct])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchTxs), "ns/tx")
	}
	out := make([]TxState, benchTxs)
	b.Run("cache", func(b *testing.B) {
		cold(b, func(batch []block.Hash) { c.LookupTxs(batch, out) })
	})
	floor := newWords(uint64(c.Stats().TableBytes / 8))
	b.Run("floor", func(b *testing.B) {
		cold(b, func(batch []block.Hash) {
			for i := range batch {
				at, _ := bits.Mul64(binary.LittleEndian.Uint64(batch[i][:8]), uint64(len(floor)))
				sink += floor[at].Load()
			}
		})
	})
	runtime.KeepAlive(sink)
}
