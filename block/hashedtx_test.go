package block

import (
	"bytes"
	"testing"
)

// A HashedTx carries its bytes, not a copy, and their hash.
func TestHashTxs(t *testing.T) {
	txs := [][]byte{{0x82, 0x01}, []byte("a tx")}
	got := HashTxs(txs)
	if len(got) != len(txs) {
		t.Fatalf("%d hashed, want %d", len(got), len(txs))
	}
	for i, tx := range txs {
		if got[i].Hash != HashBytes(tx) || !bytes.Equal(got[i].Bytes, tx) || &got[i].Bytes[0] != &tx[0] {
			t.Fatalf("tx %d: %+v", i, got[i])
		}
	}
}
