package leiosdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
)

// Benchmarks run only under -bench. The probe benchmark builds its store
// once per run; the environment sizes and places it:
//
//	LEIOSDB_BENCH_TXS     stored txs (default 1,927,424 = 128 EBs × 15,058)
//	LEIOSDB_BENCH_TXSIZE  bytes per stored tx (default 256)
//	LEIOSDB_BENCH_DIR     keep the store there and reuse it on later runs
//	                      (default: a temporary directory, removed after)
//
// e.g. go test -run '^$' -bench Probe -benchtime 20x ./leiosdb/

// fullEBLimits admit the benchmark EBs: 13,888 txs of 864 bytes need a
// 513,860-byte body, over block.DefaultEBLimits' 500,000 (the Haskell
// prototype allows 512 KiB); the probe EBs have 15,058 txs. The encoding
// is testBody's.
var fullEBLimits = block.EBLimits{MaxBodyBytes: 1 << 20, MaxClosureBytes: 16_000_000, MaxTxs: 15_058, Encoding: block.DefaultEBLimits.Encoding}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// closureTxs is a full closure: 13,888 distinct txs of 864 bytes (12 MB).
func closureTxs(seed uint64) [][]byte {
	txs := make([][]byte, 13_888)
	for i := range txs {
		txs[i] = blocktest.Tx(seed<<20|uint64(i), 864)
	}
	return txs
}

// BenchmarkInsertClosure inserts one full EB (announcement, body, 13,888
// txs, 12 MB) into a store that already holds the previous iterations'.
// "one-call" hands all txs to InsertTxs at once; "fetch-replies" in the
// ≤ 500 kB replies of the fetch protocol (578 txs).
func BenchmarkInsertClosure(b *testing.B) {
	for _, chunk := range []int{13_888, 578} {
		name := "one-call"
		if chunk < 13_888 {
			name = "fetch-replies"
		}
		b.Run(name, func(b *testing.B) {
			db := openTestDB(b, Options{Limits: fullEBLimits, CacheBytes: 128 << 20, MemTableBytes: 32 << 20})
			b.SetBytes(13_888 * 864)
			cpu := startCPUClock()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				txs := closureTxs(uint64(i))
				eb := testBody(b, txs)
				p := pointOf(uint64(i), eb)
				b.StartTimer()
				if err := db.InsertPoint(p, eb.Size()); err != nil {
					b.Fatal(err)
				}
				if _, err := db.InsertBody(p, eb.Bytes()); err != nil {
					b.Fatal(err)
				}
				completed := 0
				for k := 0; k < len(txs); k += chunk {
					res, err := db.InsertTxs(block.HashTxs(txs[k:min(k+chunk, len(txs))]))
					if err != nil {
						b.Fatal(err)
					}
					completed += len(res.Completed)
				}
				if completed != 1 {
					b.Fatalf("%d completions", completed)
				}
			}
			cpu.report(b)
		})
	}
}

const probeEBTxs = 15_058

// probeStore builds (or reuses) the store of the probe benchmark: stored txs
// in EBs of 15,058, inserted through the public API.
func probeStore(b *testing.B) (dir string, ebs int) {
	total := envInt("LEIOSDB_BENCH_TXS", 128*probeEBTxs)
	size := envInt("LEIOSDB_BENCH_TXSIZE", 256)
	ebs = max(1, total/probeEBTxs)
	dir = os.Getenv("LEIOSDB_BENCH_DIR")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "leiosdb-bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	marker := filepath.Join(dir, fmt.Sprintf("populated-%d-%d", ebs, size))
	if _, err := os.Stat(marker); err == nil {
		return dir, ebs
	}
	db, err := Open(dir, Options{Limits: fullEBLimits, Logger: quietLogger(), MemTableBytes: 64 << 20, BlockBytes: envInt("LEIOSDB_BENCH_BLOCK", 0)})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for e := range ebs {
		txs := make([][]byte, probeEBTxs)
		for i := range txs {
			txs[i] = blocktest.Tx(uint64(e)<<32|uint64(i), size)
		}
		eb := testBody(b, txs)
		p := pointOf(uint64(e+1), eb)
		if err := db.InsertPoint(p, eb.Size()); err != nil {
			b.Fatal(err)
		}
		if _, err := db.InsertBody(p, eb.Bytes()); err != nil {
			b.Fatal(err)
		}
		for k := 0; k < len(txs); k += 2000 {
			if _, err := db.InsertTxs(block.HashTxs(txs[k:min(k+2000, len(txs))])); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("populated %d EBs × %d txs of %d bytes in %v", ebs, probeEBTxs, size, time.Since(start).Round(time.Millisecond))
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir, ebs
}

// probeBatch is one EB's worth of hashes with the given share of hits
// (txs of a stored EB), interleaved with misses.
func probeBatch(ebs, hitPercent int) (hashes []block.Hash, hits int) {
	hashes = make([]block.Hash, probeEBTxs)
	e := uint64(ebs / 2)
	for i := range hashes {
		if i*hitPercent/100 != (i+1)*hitPercent/100 {
			hashes[i] = block.HashBytes(blocktest.Tx(e<<32|uint64(i), envInt("LEIOSDB_BENCH_TXSIZE", 256)))
			hits++
		} else {
			var miss [8]byte
			binary.BigEndian.PutUint64(miss[:], uint64(i))
			hashes[i] = block.HashBytes(append([]byte("miss"), miss[:]...))
		}
	}
	return hashes, hits
}

// BenchmarkProbe measures the batch membership probe of one 15,058-tx EB
// against the stored txs: HasTxs (the index in memory) at several hit
// ratios, warm and cold (page cache dropped and store reopened outside the
// timing: the reopen loads the index), and the Pebble probes it replaced:
// bloom-filtered SeekPrefixGE in ascending hash order, one Get per hash,
// SeekPrefixGE in the caller's order, and plain SeekGE in ascending order.
func BenchmarkProbe(b *testing.B) {
	dir, ebs := probeStore(b)
	open := func() *DB {
		db, err := Open(dir, Options{Limits: fullEBLimits, Logger: quietLogger(), CacheBytes: 256 << 20, BlockBytes: envInt("LEIOSDB_BENCH_BLOCK", 0)})
		if err != nil {
			b.Fatal(err)
		}
		return db
	}
	db := open()
	defer func() { db.Close() }()
	waitCompactions(b, db)

	strategies := []struct {
		name  string
		probe func(db *DB, hashes []block.Hash, out []bool) (int, error)
	}{
		{"HasTxs", (*DB).HasTxs},
		{"SortedSeekPrefixGE", probeSortedSeekPrefix},
		{"Get", probeGets},
		{"SeekPrefixGE", probeSeekPrefix},
		{"SortedSeekGE", probeSortedSeekGE},
	}
	for _, s := range strategies {
		for _, hit := range []int{0, 20, 40, 60, 80, 100} {
			if s.name != "HasTxs" && hit%100 != 0 {
				continue
			}
			hashes, hits := probeBatch(ebs, hit)
			out := make([]bool, len(hashes))
			run := func(b *testing.B) {
				n, err := s.probe(db, hashes, out)
				if err != nil || n != hits {
					b.Fatalf("%d hits, want %d: %v", n, hits, err)
				}
			}
			b.Run(fmt.Sprintf("%s/warm/hits=%d%%", s.name, hit), func(b *testing.B) {
				run(b) // warm-up
				cpu := startCPUClock()
				for b.Loop() {
					run(b)
				}
				cpu.report(b)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(hashes)), "ns/tx")
			})
			if hit%100 != 0 {
				continue
			}
			b.Run(fmt.Sprintf("%s/cold/hits=%d%%", s.name, hit), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					if err := db.Close(); err != nil {
						b.Fatal(err)
					}
					if err := DropPageCache(dir); err != nil {
						b.Fatal(err)
					}
					db = open()
					b.StartTimer()
					run(b)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(hashes)), "ns/tx")
			})
		}
	}
}

// probeSortedSeekPrefix is the Pebble probe HasTxs used before the index
// in memory, on the txs' keyspace: bloom-filtered SeekPrefixGE on one
// iterator, in ascending hash order, so the seeks only move forward and
// reuse the blocks positioned.
func probeSortedSeekPrefix(db *DB, hashes []block.Hash, out []bool) (int, error) {
	it, err := db.store.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixTx}, UpperBound: []byte{prefixTx + 1}})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	clear(out)
	n := 0
	key := make([]byte, 1+hashLen)
	key[0] = prefixTx
	for _, o := range sortedOrder(hashes) {
		copy(key[1:], hashes[o.index][:])
		if it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key) {
			out[o.index] = true
			n++
		}
	}
	return n, it.Error()
}

// probeGets is the alternative to HasTxs: one Get per hash, which consults
// the bloom filters of every level.
func probeGets(db *DB, hashes []block.Hash, out []bool) (int, error) {
	n := 0
	for i, h := range hashes {
		_, closer, err := db.store.Get(hashKey(prefixTx, h))
		if errors.Is(err, pebble.ErrNotFound) {
			out[i] = false
			continue
		}
		if err != nil {
			return n, err
		}
		closer.Close()
		out[i] = true
		n++
	}
	return n, nil
}

// probeSeekPrefix is the other alternative: SeekPrefixGE per hash on one
// iterator, in the caller's order; it also consults the bloom filters.
func probeSeekPrefix(db *DB, hashes []block.Hash, out []bool) (int, error) {
	it, err := db.store.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixTx}, UpperBound: []byte{prefixTx + 1}})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n := 0
	key := make([]byte, 1+hashLen)
	key[0] = prefixTx
	for i, h := range hashes {
		copy(key[1:], h[:])
		out[i] = it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key)
		if out[i] {
			n++
		}
	}
	return n, it.Error()
}

// cpuClock measures the process's CPU time (user + system, all threads, so
// Pebble's flushes and compactions count): on a shared machine wall time
// also counts other processes' load.
type cpuClock time.Duration

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPUClock() cpuClock { return cpuClock(cpuTime()) }

// report adds cpu-ms/op; it includes the untimed setup of each iteration.
func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(cpuTime()-time.Duration(c))/1e6/float64(b.N), "cpu-ms/op")
}

// probeSortedSeekGE walks the keys in ascending order with plain SeekGE:
// forward-only seeks, but no bloom filters.
func probeSortedSeekGE(db *DB, hashes []block.Hash, out []bool) (int, error) {
	it, err := db.store.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixTx}, UpperBound: []byte{prefixTx + 1}})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	clear(out)
	n := 0
	key := make([]byte, 1+hashLen)
	key[0] = prefixTx
	for _, o := range sortedOrder(hashes) {
		copy(key[1:], hashes[o.index][:])
		if !it.SeekGE(key) {
			break // nothing at or after key: no larger hash is held
		}
		if bytes.Equal(it.Key(), key) {
			out[o.index] = true
			n++
		}
	}
	return n, it.Error()
}

// waitCompactions waits until Pebble has no flush or compaction running, so
// that background work after opening does not land in the measurements.
func waitCompactions(b *testing.B, db *DB) {
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(100 * time.Millisecond) {
		m := db.store.Metrics()
		if m.Compact.NumInProgress == 0 && m.Flush.NumInProgress == 0 {
			return
		}
	}
	b.Log("compactions still running after a minute")
}

// BenchmarkVolatileWindow is the LeiosDB's steady state on a busy chain:
// each op is one EB of 4,000 payments (200 bytes) announced, its body and
// then its missing txs stored, and the oldest EB of a window of 40 garbage
// collected. As on a chain where most EBs are not certified, two thirds of
// each EB are txs of the EB before it (named again), one third new, so a
// tx is named by three EBs in turn. cpu-µs/tx is the process's CPU per tx
// of an EB; it counts Pebble's background flushes and compactions.
func BenchmarkVolatileWindow(b *testing.B) {
	const (
		ebTxs  = 4_000
		window = 40
		size   = 200
	)
	db := openTestDB(b, Options{Limits: fullEBLimits, CacheBytes: 128 << 20, MemTableBytes: 64 << 20})
	prev := make([][]byte, 0, ebTxs)
	fresh := uint64(0)
	next := func() [][]byte {
		txs := make([][]byte, 0, ebTxs)
		txs = append(txs, prev[min(len(prev), ebTxs/3):]...)
		for len(txs) < ebTxs {
			fresh++
			txs = append(txs, blocktest.Tx(fresh, size))
		}
		prev = txs
		return txs
	}
	step := func(slot uint64) {
		txs := next()
		eb := testBody(b, txs)
		p := pointOf(slot, eb)
		if err := db.InsertPoint(p, eb.Size()); err != nil {
			b.Fatal(err)
		}
		c, err := db.InsertBody(p, eb.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		if !c.Complete() {
			missing, err := db.Missing(p)
			if err != nil {
				b.Fatal(err)
			}
			wanted := make([][]byte, len(missing))
			for i, at := range missing {
				wanted[i] = txs[at]
			}
			if _, err := db.InsertTxs(block.HashTxs(wanted)); err != nil {
				b.Fatal(err)
			}
		}
		if slot > window {
			if _, err := db.GC(slot - window); err != nil {
				b.Fatal(err)
			}
		}
	}
	slot := uint64(1)
	for ; slot <= 2*window; slot++ { // fill the window before measuring
		step(slot)
	}
	cpu := startCPUClock()
	for b.Loop() {
		step(slot)
		slot++
	}
	b.ReportMetric(float64(cpuTime()-time.Duration(cpu))/1e3/float64(b.N*ebTxs), "cpu-µs/tx")
}
