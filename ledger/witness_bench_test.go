//go:build linux

package ledger

import (
	"crypto/ed25519"
	"fmt"
	"runtime"
	"testing"
	"time"

	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
	"golang.org/x/sys/unix"
)

// witnessBatch is n txs of one witness each, over ids of their own, signed
// by n/perKey keys in turn (each key signs perKey of them; at least one
// key).
func witnessBatch(n, perKey int) []*Tx {
	keys := make([]ed25519.PrivateKey, max(1, n/perKey))
	for i := range keys {
		var seed [ed25519.SeedSize]byte
		seed[0], seed[1], seed[2] = byte(i), byte(i>>8), 0xb7
		keys[i] = ed25519.NewKeyFromSeed(seed[:])
	}
	txs := make([]*Tx, n)
	for i := range txs {
		id := [32]byte{byte(i), byte(i >> 8), 0x1d}
		k := keys[i%len(keys)]
		var w VKeyWitness
		copy(w.VKey[:], k.Public().(ed25519.PublicKey))
		copy(w.Signature[:], ed25519.Sign(k, id[:]))
		txs[i] = witnessTx(id, w)
	}
	return txs
}

// threadCPU is the CPU time of the calling thread: the benchmark reads it,
// not the wall clock, so that other processes on the cores do not count.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// BenchmarkWitnesses verifies the same batch of witnesses, in each
// iteration, one by one with crypto/ed25519.Verify (single: the check the
// ledger had) and with VerifySignatures (batch), and reports the CPU time
// per witness of each, on one core (VerifySignatures spreads over
// GOMAXPROCS cores besides). keys=distinct: every witness by a key of its
// own; keys=recurring: each key signs 8 of the batch, as a wallet's chain
// of txs does. cofactored is voi's batch equation on the same witnesses,
// for reference only: it does not keep crypto/ed25519's rules (witness.go).
func BenchmarkWitnesses(b *testing.B) {
	for _, n := range []int{1, 8, 64, 512} {
		for _, keys := range []struct {
			name   string
			perKey int
		}{{"distinct", 1}, {"recurring", 8}} {
			txs := witnessBatch(n, keys.perKey)
			b.Run(fmt.Sprintf("n=%d/keys=%s", n, keys.name), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				opts := &voi.Options{Verify: voi.VerifyOptionsFIPS_186_5}
				var single, batch, cofactored time.Duration
				for b.Loop() {
					t0 := threadCPU(b)
					for _, tx := range txs {
						if stdlibVerdict(tx) != nil {
							b.Fatal("refused")
						}
					}
					t1 := threadCPU(b)
					for _, v := range VerifySignatures(txs) {
						if v.Err() != nil {
							b.Fatal(v.Err())
						}
					}
					t2 := threadCPU(b)
					v := voi.NewBatchVerifierWithCapacity(n)
					for _, tx := range txs {
						v.AddWithOptions(tx.Witnesses[0].VKey[:], tx.id[:], tx.Witnesses[0].Signature[:], opts)
					}
					if !v.VerifyBatchOnly(nil) {
						b.Fatal("refused")
					}
					t3 := threadCPU(b)
					single, batch, cofactored = single+t1-t0, batch+t2-t1, cofactored+t3-t2
				}
				per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*n) }
				b.ReportMetric(per(single), "single-ns/witness")
				b.ReportMetric(per(batch), "batch-ns/witness")
				b.ReportMetric(per(batch)/per(single), "batch/single")
				b.ReportMetric(per(cofactored), "cofactored-ns/witness")
			})
		}
	}
}
