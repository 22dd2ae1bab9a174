package bls

import (
	"fmt"
	"testing"
)

// benchSigners are the signer counts of the benchmarks: a small devnet, and
// committees of the sizes the Leios analyses consider.
var benchSigners = []int{3, 100, 500}

// signers returns n keys and their signatures on msg.
func signers(b *testing.B, n int, msg []byte) ([]*PublicKey, []*Signature, []SignedMessage) {
	pks, sigs, batch := make([]*PublicKey, n), make([]*Signature, n), make([]SignedMessage, n)
	for i := range n {
		sk, err := KeyFromSeed(fmt.Appendf(nil, "benchmark signer %022d", i))
		if err != nil {
			b.Fatal(err)
		}
		pks[i], sigs[i] = sk.PublicKey(), sk.Sign(msg)
		batch[i] = SignedMessage{Key: pks[i], Message: msg, Signature: sigs[i]}
	}
	return pks, sigs, batch
}

func BenchmarkSign(b *testing.B) {
	sk := testKey(b, 1)
	for b.Loop() {
		sk.Sign([]byte("message"))
	}
}

func BenchmarkVerify(b *testing.B) {
	sk := testKey(b, 1)
	pk, sig := sk.PublicKey(), sk.Sign([]byte("message"))
	for b.Loop() {
		if !pk.Verify([]byte("message"), sig) {
			b.Fatal("does not verify")
		}
	}
}

func BenchmarkVerifyPossession(b *testing.B) {
	sk := testKey(b, 1)
	pk, proof := sk.PublicKey(), sk.ProvePossession()
	for b.Loop() {
		if !pk.VerifyPossession(proof) {
			b.Fatal("does not verify")
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	sk := testKey(b, 1)
	pk, sig := sk.PublicKey().Bytes(), sk.Sign(nil).Bytes()
	b.Run("public key", func(b *testing.B) {
		for b.Loop() {
			if _, err := PublicKeyFromBytes(pk[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("signature", func(b *testing.B) {
		for b.Loop() {
			if _, err := SignatureFromBytes(sig[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAggregateSignatures(b *testing.B) {
	for _, n := range benchSigners {
		_, sigs, _ := signers(b, n, []byte("message"))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := AggregateSignatures(sigs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerifyAggregate(b *testing.B) {
	for _, n := range benchSigners {
		pks, sigs, _ := signers(b, n, []byte("message"))
		agg, err := AggregateSignatures(sigs)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if !VerifyAggregate(pks, []byte("message"), agg) {
					b.Fatal("does not verify")
				}
			}
		})
	}
}

func BenchmarkVerifyBatch(b *testing.B) {
	for _, n := range benchSigners {
		_, _, batch := signers(b, n, []byte("message"))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if !VerifyBatch(batch) {
					b.Fatal("does not verify")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/signature")
		})
	}
}
