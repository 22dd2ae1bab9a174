package ledger

import (
	"crypto/ed25519"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

// MinFee is the least fee that satisfies the fee rule for the tx it builds.
func TestPropertyMinFee(t *testing.T) {
	p := DefaultParams()
	keys := []ed25519.PrivateKey{testKey(1), testKey(2), testKey(3)}
	rapid.Check(t, func(t *rapid.T) {
		var b TxBody
		for i := range rapid.IntRange(0, 30).Draw(t, "inputs") {
			b.Inputs = append(b.Inputs, TxIn{TxID: [32]byte{byte(i)}, Index: rapid.Uint32Range(0, 65535).Draw(t, "index")})
		}
		for range rapid.IntRange(0, 30).Draw(t, "outputs") {
			b.Outputs = append(b.Outputs, TxOut{Address: addrOf(keys[0]), Coin: rapid.Uint64().Draw(t, "coin")})
		}
		if rapid.Bool().Draw(t, "ttl") {
			b.TTL = ptr(rapid.Uint64().Draw(t, "ttl value"))
		}
		signers := keys[:rapid.IntRange(0, len(keys)).Draw(t, "signers")]
		fee, err := b.MinFee(p, len(signers))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			fee uint64
			ok  bool
		}{{fee, true}, {fee - 1, false}} {
			b.Fee = tc.fee
			tx, err := b.Build(signers)
			if err != nil {
				t.Fatal(err)
			}
			if size, _ := b.SizeWith(len(signers)); size != tx.Size() {
				t.Fatalf("SizeWith %d, built %d", size, tx.Size())
			}
			if ok := tc.fee >= p.MinFee(tx.Size()); ok != tc.ok {
				t.Fatalf("fee %d for %d bytes: meets minimum %v, want %v", tc.fee, tx.Size(), ok, tc.ok)
			}
		}
	})
}

func TestBuildPayment(t *testing.T) {
	p := DefaultParams()
	k := testKey(1)
	in := TxIn{TxID: [32]byte{1}}
	utxo := MapUTxO{in: {Address: addrOf(k), Coin: 10_000_000}}
	pay := []TxOut{{Address: addrOf(testKey(2)), Coin: 4_000_000}}

	tx, err := BuildPayment(p, []TxIn{in}, 10_000_000, pay, addrOf(k), ptr(50), signers(k))
	if err != nil {
		t.Fatal(err)
	}
	if len(tx.Outputs) != 2 || tx.Outputs[0].Coin != 4_000_000 || tx.Outputs[1].Coin+tx.Fee != 6_000_000 || *tx.TTL != 50 {
		t.Fatalf("outputs %v fee %d", tx.Outputs, tx.Fee)
	}
	if tx.Fee != p.MinFee(tx.Size()) {
		t.Fatalf("fee %d, minimum %d: not the least fee", tx.Fee, p.MinFee(tx.Size()))
	}
	if _, err := Apply(p, utxo, 0, tx); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name  string
		total uint64
		pay   []TxOut
	}{
		{"outputs exceed inputs", 3_000_000, pay},
		{"nothing left for the fee", 4_100_000, pay},
		{"change under the minimum", 4_000_000 + tx.Fee + MinOutputCoin(p, addrOf(k)) - 1, pay},
		{"outputs overflow", 10, []TxOut{{Address: addrOf(k), Coin: 1 << 63}, {Address: addrOf(k), Coin: 1 << 63}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := BuildPayment(p, []TxIn{in}, tt.total, tt.pay, addrOf(k), ptr(50), signers(k)); !errors.Is(err, ErrCannotBalance) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestMinOutputCoin(t *testing.T) {
	p := DefaultParams()
	addr := addrOf(testKey(1))
	least := MinOutputCoin(p, addr)
	// [bytes(29), uint32]: 1 + 2+29 + 5 bytes.
	if least != p.CoinsPerUTxOByte*(160+37) {
		t.Fatalf("MinOutputCoin = %d", least)
	}
}
