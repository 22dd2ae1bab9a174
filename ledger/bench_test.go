package ledger

import (
	"crypto/ed25519"
	"fmt"
	"runtime"
	"testing"
)

// benchTx is a typical payment: 2 inputs, 2 outputs, 2 witnesses.
func benchTx(b *testing.B) (ruleFixture, *Tx) {
	f := newRuleFixture()
	tx, err := BuildPayment(f.p, []TxIn{f.in1, f.in2}, 30_000_000, []TxOut{{Address: addrOf(f.k1), Coin: 5_000_000}}, addrOf(f.k2), nil, signers(f.k1, f.k2))
	if err != nil {
		b.Fatal(err)
	}
	return f, tx
}

func BenchmarkDecodeTx(b *testing.B) {
	_, tx := benchTx(b)
	raw := tx.Bytes()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTx(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApply(b *testing.B) {
	f, tx := benchTx(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Apply(f.p, f.utxo, 0, tx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReapply(b *testing.B) {
	f, tx := benchTx(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Reapply(f.p, f.utxo, 0, tx); err != nil {
			b.Fatal(err)
		}
	}
}

// closureSize is about the txs of a certified closure in the sync
// benchmark (511k txs in 109 EBs).
const closureSize = 4_700

// benchClosure is closureSize signed payments in 40 interleaved chains,
// each spending the one before it in its chain, and the UTxO they start
// from.
func benchClosure(b *testing.B) (Params, MapUTxO, [][]byte) {
	p := DefaultParams()
	utxo := MapUTxO{}
	keys := make([]ed25519.PrivateKey, 40)
	heads := make([]TxIn, len(keys))
	coins := make([]uint64, len(keys))
	for k := range keys {
		keys[k] = testKey(byte(k + 1))
		heads[k] = TxIn{TxID: [32]byte{0xee, byte(k)}}
		coins[k] = 1_000_000_000_000
		utxo[heads[k]] = TxOut{Address: addrOf(keys[k]), Coin: coins[k]}
	}
	raws := make([][]byte, closureSize)
	for i := range raws {
		k := i % len(keys)
		tx, err := BuildPayment(p, []TxIn{heads[k]}, coins[k], nil, addrOf(keys[k]), nil, signers(keys[k]))
		if err != nil {
			b.Fatal(err)
		}
		raws[i] = tx.Bytes()
		heads[k], coins[k] = TxIn{TxID: tx.ID()}, coins[k]-tx.Fee
	}
	return p, utxo, raws
}

// BenchmarkApplyTxsClosure applies a certified closure's worth of txs,
// every witness verified, on one core and on two: the signatures are
// verified ahead on GOMAXPROCS goroutines.
func BenchmarkApplyTxsClosure(b *testing.B) {
	p, utxo, raws := benchClosure(b)
	for _, procs := range []int{1, 2} {
		b.Run(fmt.Sprintf("gomaxprocs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ApplyTxs(p, utxo, 0, raws, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(raws))/b.Elapsed().Seconds(), "txs/s")
		})
	}
}
