package main

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/ledger"
)

// TestBuildSend: tx send spends the sender's largest outputs first, as few
// as pay the amount, the fee and the change, into a tx the ledger's rules
// (signatures included) admit; it says what is missing when the outputs
// cannot pay, and refuses an amount below the output minimum and a tx over
// the max size.
func TestBuildSend(t *testing.T) {
	p := ledger.DefaultParams()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))
	from := ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	to := ledger.EnterpriseAddress(0, [28]byte{2})
	var funds []fund
	utxo := ledger.MapUTxO{}
	for i, ada := range []uint64{1, 10, 3, 50} {
		in := ledger.TxIn{TxID: [32]byte{byte(i + 1)}}
		funds = append(funds, fund{in: in, coin: ada * 1_000_000})
		utxo[in] = ledger.TxOut{Address: from, Coin: ada * 1_000_000}
	}
	for _, tc := range []struct {
		amount uint64
		spends []byte // the first byte of each input's tx id, in order
	}{
		{20_000_000, []byte{4}},          // the 50 alone
		{55_000_000, []byte{4, 2}},       // 50 and 10
		{61_000_000, []byte{4, 2, 3}},    // 50, 10 and 3
		{49_000_000, []byte{4, 2}},       // 50 leaves too little for the fee and the change
		{1_000_000, []byte{4}},           // the least output
		{62_500_000, []byte{4, 2, 3, 1}}, // all four
	} {
		tx, err := buildSend(p, key, from, funds, to, tc.amount)
		if err != nil {
			t.Fatalf("paying %d: %v", tc.amount, err)
		}
		var spent []byte
		for _, in := range tx.Inputs {
			spent = append(spent, in.TxID[0])
		}
		if !bytes.Equal(spent, tc.spends) {
			t.Errorf("paying %d spends %v, want %v", tc.amount, spent, tc.spends)
		}
		if len(tx.Outputs) != 2 || !bytes.Equal(tx.Outputs[0].Address, to) || tx.Outputs[0].Coin != tc.amount || !bytes.Equal(tx.Outputs[1].Address, from) {
			t.Errorf("paying %d: outputs %+v", tc.amount, tx.Outputs)
		}
		if _, err := ledger.Apply(p, utxo, 0, tx); err != nil {
			t.Errorf("paying %d: the ledger refuses the tx: %v", tc.amount, err)
		}
	}

	_, err := buildSend(p, key, from, funds, to, 64_000_000)
	if !errors.Is(err, errInsufficientFunds) || !strings.Contains(err.Error(), "holds 64000000 lovelace in 4 outputs") ||
		!strings.Contains(err.Error(), ledger.FormatAddress(from)) {
		t.Errorf("paying more than the outputs hold: %v", err)
	}
	if _, err := buildSend(p, key, from, nil, to, 1_000_000); !errors.Is(err, errInsufficientFunds) {
		t.Errorf("paying from an address without outputs: %v", err)
	}
	if _, err := buildSend(p, key, from, funds, to, 500_000); err == nil || !strings.Contains(err.Error(), "below the least an output") {
		t.Errorf("paying less than an output's minimum: %v", err)
	}
	small := p
	small.MaxTxSize = 299
	if _, err := buildSend(small, key, from, funds, to, 61_000_000); err == nil || !strings.Contains(err.Error(), "over the max tx size 299") {
		t.Errorf("a tx over the max size: %v", err)
	}
}
