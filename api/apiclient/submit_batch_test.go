package apiclient

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/api"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// chainOfPayments is n txs of a fresh key, each spending the one before's
// output, and the UTxO funding the first.
func chainOfPayments(t *testing.T, n int) ([][]byte, []string, ledger.MapUTxO) {
	t.Helper()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))
	addr := ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	coin := uint64(50_000_000_000)
	utxo, err := ledger.GenesisUTxO(map[string]uint64{hex.EncodeToString(addr): coin})
	if err != nil {
		t.Fatal(err)
	}
	in := ledger.GenesisTxIn(addr)
	var txs [][]byte
	var ids []string
	for range n {
		tx, err := ledger.BuildPayment(ledger.DefaultParams(), []ledger.TxIn{in}, coin, nil, addr, nil, []ed25519.PrivateKey{key})
		if err != nil {
			t.Fatal(err)
		}
		id := tx.ID()
		txs, ids = append(txs, tx.Bytes()), append(ids, hex.EncodeToString(id[:]))
		in, coin = ledger.TxIn{TxID: id, Index: 0}, tx.Outputs[0].Coin
	}
	return txs, ids, utxo
}

// node serves a node's API over a mempool on utxo; alone is true for a
// node older than the batch route, which serves the single submit alone.
func node(t *testing.T, utxo ledger.MapUTxO, gate *admission.Gate, alone bool) (*httptest.Server, *mempool.Mempool) {
	t.Helper()
	pool, err := mempool.New(mempool.Options{TipLedger: func() (ledger.UTxO, block.Tip, func(), error) { return utxo, block.Tip{}, func() {}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := api.New(api.Options{Mempool: pool, Admission: gate, MaxTxSize: 16384, SubmitTimeout: time.Second, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if alone {
		mux := http.NewServeMux()
		mux.Handle("POST /api/submit/tx", h)
		h = mux
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, pool
}

// TestSubmitBatch: a batch's answers are read per tx — the tx id, a
// rejection with its rule, a refusal with its reason — the same from a
// node older than the route, to which the txs go one POST each; a batch
// the edge refuses whole is a *RefusedError.
func TestSubmitBatch(t *testing.T) {
	for _, alone := range []bool{false, true} {
		txs, ids, utxo := chainOfPayments(t, 3)
		srv, pool := node(t, utxo, nil, alone)
		c := New(srv.Client(), srv.URL)
		// The second tx again, before its parent: its input is missing;
		// then the chain, in order.
		results, err := c.SubmitBatch(context.Background(), [][]byte{txs[1], txs[0], txs[1], txs[2], txs[0]})
		if err != nil {
			t.Fatalf("alone %v: %v", alone, err)
		}
		var rejected *RejectedError
		if len(results) != 5 || !errors.As(results[0].Err, &rejected) || rejected.Rule != "input-missing" {
			t.Fatalf("alone %v: %+v, want the first rejected for its missing input", alone, results)
		}
		for i, want := range []string{ids[0], ids[1], ids[2]} {
			if r := results[i+1]; r.Err != nil || r.ID != want {
				t.Errorf("alone %v: tx %d: %+v, want admitted as %s", alone, i+1, r, want)
			}
		}
		if !errors.As(results[4].Err, &rejected) || !rejected.Held() {
			t.Errorf("alone %v: the first tx again: %+v, want held already", alone, results[4])
		}
		if pool.Snapshot().Len() != 3 {
			t.Errorf("alone %v: the mempool holds %d txs, want 3", alone, pool.Snapshot().Len())
		}
		if c.noBatch.Load() != alone {
			t.Errorf("alone %v: the client remembers no batch route: %v", alone, c.noBatch.Load())
		}
	}

	txs, _, utxo := chainOfPayments(t, 1)
	gate, err := admission.NewGate(admission.Options{}, func() admission.Figures {
		return admission.Figures{Now: time.Now(), ClockSlot: 1000, TipSlot: 10}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gate.Update()
	srv, _ := node(t, utxo, gate, false)
	_, err = New(srv.Client(), srv.URL).SubmitBatch(context.Background(), txs)
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Reason != "syncing" || refused.RetryAfter != 5*time.Second {
		t.Errorf("a batch at a closed edge: %v, want refused (syncing) for 5 s", err)
	}
}

// TestBatchBody: the body is a CBOR array of the txs as they are, its
// count in the shortest head.
func TestBatchBody(t *testing.T) {
	for _, tc := range []struct{ txs, head int }{{0, 1}, {1, 1}, {23, 1}, {24, 2}, {255, 2}, {256, 3}, {65535, 3}, {65536, 5}} {
		txs := make([][]byte, tc.txs)
		for i := range txs {
			txs[i] = []byte{0x80}
		}
		body := BatchBody(txs)
		if body[0]>>5 != 4 || len(body)-tc.txs != tc.head || !bytes.Equal(body[tc.head:], bytes.Repeat([]byte{0x80}, tc.txs)) {
			t.Errorf("%d txs: head %x, %d bytes in all; want an array's head of %d bytes, then the txs", tc.txs, body[:min(len(body), 5)], len(body), tc.head)
		}
	}
}
