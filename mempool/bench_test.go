package mempool

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/leiosnode/leiosnode/block"
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

// syncBench is the load of BenchmarkSync, built once: chains of txs
// spending genesis outputs of one key, held in round-robin order (the
// first tx of every chain, then the second...), so a block of the first
// ones leaves dependents whose input's creator it included.
type syncBench struct {
	genesis ledger.MapUTxO
	txs     []*ledger.Tx // in ticket order
}

const (
	syncBenchHeld    = 20_000
	syncBenchChain   = 4 // txs per chain
	syncBenchInBlock = 500
)

var buildSyncBench = sync.OnceValues(func() (*syncBench, error) {
	key := testKey(0)
	addr := addrOf(key)
	sb := &syncBench{genesis: ledger.MapUTxO{}}
	chains := syncBenchHeld / syncBenchChain
	heads := make([]ledger.TxIn, chains)
	coins := make([]uint64, chains)
	for i := range heads {
		binary.BigEndian.PutUint64(heads[i].TxID[:], uint64(i)+1)
		coins[i] = 100_000_000
		sb.genesis[heads[i]] = ledger.TxOut{Address: addr, Coin: coins[i]}
	}
	for range syncBenchChain {
		for i := range heads {
			coins[i] -= mempoolFee
			tx, err := ledger.TxBody{Inputs: []ledger.TxIn{heads[i]}, Outputs: []ledger.TxOut{{Address: addr, Coin: coins[i]}}, Fee: mempoolFee}.Build([]ed25519.PrivateKey{key})
			if err != nil {
				return nil, err
			}
			sb.txs = append(sb.txs, tx)
			heads[i] = ledger.TxIn{TxID: tx.ID()}
		}
	}
	return sb, nil
})

// plainLedger hides a view's ExtensionView: the full path's ledger.
func plainLedger(tipLedger func() (ledger.UTxO, block.Tip, func(), error)) func() (ledger.UTxO, block.Tip, func(), error) {
	return func() (ledger.UTxO, block.Tip, func(), error) {
		v, tip, release, err := tipLedger()
		return struct{ ledger.UTxO }{v}, tip, release, err
	}
}

// BenchmarkSync is the sync of a mempool of 20k txs after a block that
// includes 500 of them (whose 1,500 dependents stay), by either path, on an
// in-memory chain: the full revalidation reapplies every tx, the extension
// path carries them. The base UTxO is a Go map here, where a node's is
// Pebble, so the full path's figure is a floor. ns/held-tx is the sync's
// time over the txs it judged; allocs/op and B/op are the sync's alone.
// Each iteration first fills a mempool (untimed, a tenth of a second or
// more): run it with -benchtime=10x.
func BenchmarkSync(b *testing.B) {
	sb, err := buildSyncBench()
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []SyncPath{SyncFull, SyncExtension} {
		b.Run(path.String(), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				chain := newTestChain(10, sb.genesis)
				opts := Options{TipLedger: chain.TipLedger, Apply: ledger.Reapply} // admitted unsigned: setup only
				if path == SyncFull {
					opts.TipLedger = plainLedger(chain.TipLedger)
				}
				m, err := New(opts)
				if err != nil {
					b.Fatal(err)
				}
				for _, tx := range sb.txs {
					if err := m.Add(context.Background(), tx); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := chain.add(chain.tip(), 1, sb.txs[:syncBenchInBlock]); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				r, err := m.Sync(context.Background())
				b.StopTimer()
				if err != nil || r.Path != path || len(r.Dropped) != syncBenchInBlock || r.Revalidated != syncBenchHeld {
					b.Fatalf("sync %v: path %s, %d dropped, %d judged", err, r.Path, len(r.Dropped), r.Revalidated)
				}
				m.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*syncBenchHeld), "ns/held-tx")
		})
	}
}
