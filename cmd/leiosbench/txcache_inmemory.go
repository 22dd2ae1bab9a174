package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/benchkeys"
	"github.com/leiosnode/leiosnode/txcache"
)

// populateCache builds a LeiosTxCache and fills it as the node would, EB by
// EB: announcement, body, then the body's txs marked inserted. The timing
// covers the filling, not New (which allocates and faults in the table once
// at start); the heap is the growth in use after runtime.GC.
func populateCache(w *workload) (*txcache.Cache, population, error) {
	before := heapInUse()
	cache := txcache.New(txcache.Options{})
	start := time.Now()
	for eb := range w.ebs {
		ebHash := benchkeys.EBHash(eb)
		if !cache.InsertAnnouncement(uint64(eb), benchkeys.RBHash(eb), ebHash) {
			return nil, population{}, fmt.Errorf("txcache: announcement of EB %d not held", eb)
		}
		if _, err := cache.InsertBody(ebHash, w.bodies[eb]); err != nil {
			return nil, population{}, fmt.Errorf("txcache: body of EB %d: %w", eb, err)
		}
		cache.MarkInserted(w.hashes[eb])
	}
	elapsed := time.Since(start)
	stats := cache.Stats()
	if stats.Txs != w.total() || stats.RefusedInserts != 0 {
		return nil, population{}, fmt.Errorf("txcache: holds %d txs (%d refused), want %d",
			stats.Txs, stats.RefusedInserts, w.total())
	}
	return cache, population{
		TimeNs:     elapsed.Nanoseconds(),
		HeapBytes:  heapInUse() - before,
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

// populateMap fills the reference map with the cache's two passes per EB:
// the body counts a reference to each tx, the marks set it inserted. The map
// is sized for all txs before the timing, as the cache's table is.
func populateMap(w *workload) (refMap, population) {
	before := heapInUse()
	m := make(refMap, w.total())
	start := time.Now()
	for eb := range w.ebs {
		for _, tx := range w.bodies[eb] {
			v := m[tx.TxHash]
			if v == 0 {
				v = refNotYetInserted
			}
			m[tx.TxHash] = v + refOne
		}
		for _, h := range w.hashes[eb] {
			if v, ok := m[h]; ok && v&refStateMask < refInserted {
				m[h] = v&^refStateMask | refInserted
			}
		}
	}
	elapsed := time.Since(start)
	return m, population{TimeNs: elapsed.Nanoseconds(), HeapBytes: heapInUse() - before}
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
