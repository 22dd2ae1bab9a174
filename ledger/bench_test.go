package ledger

import (
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
