package txcache

import (
	"fmt"
	"runtime"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/benchkeys"
	"github.com/leiosnode/leiosnode/txcache"
)

// newCache returns an empty LeiosTxCache of capacity slots, the heap it takes, and how much
// of its table the kernel backed with huge pages. New allocates the table
// and faults it in.
func newCache(capacity int) (c *txcache.Cache, heap, huge int64) {
	before := heapInUse()
	huge = hugeGrowth(func() { c = txcache.New(txcache.Options{TxCapacity: capacity}) })
	return c, heapInUse() - before, huge
}

// insertEB takes EB eb into the cache as the node does, less the timing:
// announcement, body (returning the missing txs), then the txs marked
// inserted once fetched.
func insertEB(c *txcache.Cache, w *workload, eb int) error {
	if !c.InsertAnnouncement(uint64(eb), benchkeys.RBHash(eb), benchkeys.EBHash(eb)) {
		return fmt.Errorf("txcache: announcement of EB %d not held", eb)
	}
	if _, err := c.InsertBody(benchkeys.EBHash(eb), w.bodies[eb]); err != nil {
		return fmt.Errorf("txcache: body of EB %d: %w", eb, err)
	}
	c.MarkInserted(w.hashes[eb])
	return nil
}

// populateCache fills an empty cache with every EB of w and times it. The
// table was allocated and faulted in by New, before the timing; the heap is
// the empty cache's (emptyHeap) and the population's growth after
// runtime.GC.
func populateCache(c *txcache.Cache, w *workload, emptyHeap int64) (population, error) {
	heapBefore := heapInUse()
	start := time.Now()
	for eb := range w.ebs {
		if err := insertEB(c, w, eb); err != nil {
			return population{}, err
		}
	}
	elapsed := time.Since(start)
	stats := c.Stats()
	if stats.Txs != w.total() || stats.RefusedInserts != 0 {
		return population{}, fmt.Errorf("txcache: holds %d txs (%d refused), want %d",
			stats.Txs, stats.RefusedInserts, w.total())
	}
	return population{
		TimeNs:     elapsed.Nanoseconds(),
		HeapBytes:  emptyHeap + heapInUse() - heapBefore,
		TableBytes: int64(stats.TableBytes),
	}, nil
}

// refMap is the reference: a plain Go map from tx hash to the same state
// word the cache keeps (state in the low bits, then a reference count).
type refMap map[[32]byte]uint64

const (
	refNotYetInserted = uint64(txcache.TxNotYetInserted)
	refInserted       = uint64(txcache.TxInserted)
	refStateMask      = 3
	refOne            = 4
)

// newRefMap returns an empty map sized for n txs and faulted in, as the
// cache's table is before its population (filled with n other keys, then
// cleared: a cleared map keeps its memory), and the heap it takes.
func newRefMap(n int) (refMap, int64) {
	before := heapInUse()
	m := make(refMap, n)
	for i := range n {
		m[benchkeys.FillerKey(i)] = 1
	}
	clear(m)
	return m, heapInUse() - before
}

// insertBody does what the cache's InsertBody does: it counts a reference
// to each tx and returns the indexes of those not held.
func (m refMap) insertBody(body []block.EBTx, missing []int) []int {
	for i, tx := range body {
		v := m[tx.TxHash]
		if v == 0 {
			v = refNotYetInserted
		}
		m[tx.TxHash] = v + refOne
		if v&refStateMask < refInserted {
			missing = append(missing, i)
		}
	}
	return missing
}

// markInserted sets the txs of a body inserted.
func (m refMap) markInserted(hashes []block.Hash) {
	for _, h := range hashes {
		if v, ok := m[h]; ok && v&refStateMask < refInserted {
			m[h] = v&^refStateMask | refInserted
		}
	}
}

// populateMap fills an empty map with the cache's two passes per EB and
// times it; the heap is as for populateCache.
func populateMap(m refMap, w *workload, emptyHeap int64) population {
	heapBefore := heapInUse()
	var missing []int
	start := time.Now()
	for eb := range w.ebs {
		missing = m.insertBody(w.bodies[eb], missing[:0])
		m.markInserted(w.hashes[eb])
	}
	elapsed := time.Since(start)
	return population{TimeNs: elapsed.Nanoseconds(), HeapBytes: emptyHeap + heapInUse() - heapBefore}
}

// held counts the batch's txs the map holds as inserted.
func (m refMap) held(batch []block.Hash) int {
	n := 0
	for _, h := range batch {
		if m[h]&refStateMask >= refInserted {
			n++
		}
	}
	return n
}

// heapInUse is the heap in use after a full collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
