package mempool

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/leiosnode/leiosnode/ledger"
)

// benchKeys are n distinct outputs, as a lineage's spent index holds.
func benchKeys(n int) []ledger.TxIn {
	keys := make([]ledger.TxIn, n)
	for i := range keys {
		binary.LittleEndian.PutUint64(keys[i].TxID[:], uint64(i)*0x9e3779b97f4a7c15)
		binary.LittleEndian.PutUint64(keys[i].TxID[8:], uint64(i))
		keys[i].Index = uint32(i % 3)
	}
	return keys
}

// BenchmarkIndex compares a lineage index (posIndex) with the sync.Map it
// replaced, and a presized Go map beside them as the reference a single
// goroutine could have: building an index of n outputs (what a sync's
// rebuild does for every tx it keeps), then looking up each (hits) and as
// many absent keys (misses: an Add's lookups of chain inputs). Figures are
// per key.
func BenchmarkIndex(b *testing.B) {
	const n = 50_000
	keys, absent := benchKeys(2 * n)[:n], benchKeys(2 * n)[n:]
	kinds := []struct {
		name  string
		build func() (load func(ledger.TxIn) (int, bool))
	}{
		{"posIndex-rebuilt", func() func(ledger.TxIn) (int, bool) { // as a sync rebuilds: sized, unshared
			var x posIndex
			x.reserve(n)
			return fillPosIndex(&x, keys, false)
		}},
		{"posIndex-added", func() func(ledger.TxIn) (int, bool) { // as adds fill a lineage: grown, shared
			var x posIndex
			return fillPosIndex(&x, keys, true)
		}},
		{"sync.Map", func() func(ledger.TxIn) (int, bool) {
			var x indexMap[ledger.TxIn, int]
			for i, k := range keys {
				x.store(k, i)
			}
			return x.load
		}},
		{"go-map-reference", func() func(ledger.TxIn) (int, bool) {
			x := make(map[ledger.TxIn]int, n)
			for i, k := range keys {
				x[k] = i
			}
			return func(k ledger.TxIn) (int, bool) { v, ok := x[k]; return v, ok }
		}},
	}
	for _, kind := range kinds {
		b.Run(fmt.Sprintf("build/%s", kind.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				kind.build()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
		load := kind.build()
		for _, probe := range []struct {
			name string
			keys []ledger.TxIn
			hit  bool
		}{{"hit", keys, true}, {"miss", absent, false}} {
			b.Run(fmt.Sprintf("load-%s/%s", probe.name, kind.name), func(b *testing.B) {
				for b.Loop() {
					for _, k := range probe.keys {
						if _, ok := load(k); ok != probe.hit {
							b.Fatalf("load(%s) = %v", k, ok)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
			})
		}
	}
}

// fillPosIndex stores keys in x as a lineage does (the key confirmed
// against what sits at its position) and returns its lookup.
func fillPosIndex(x *posIndex, keys []ledger.TxIn, shared bool) func(ledger.TxIn) (int, bool) {
	for i := range keys {
		x.store(keyHash(&keys[i].TxID, keys[i].Index), i, shared)
	}
	return func(k ledger.TxIn) (int, bool) {
		return x.find(keyHash(&k.TxID, k.Index), len(keys), func(pos int) bool { return keys[pos] == k })
	}
}
