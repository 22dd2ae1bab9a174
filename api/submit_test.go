package api

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// payment is a signed tx spending the genesis funds of a fresh key, and
// the UTxO that holds those funds.
func payment(t *testing.T, seed byte, coin uint64) (*ledger.Tx, ledger.MapUTxO) {
	t.Helper()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
	addr := ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	utxo, err := ledger.GenesisUTxO(map[string]uint64{hex.EncodeToString(addr): coin})
	if err != nil {
		t.Fatal(err)
	}
	body := ledger.TxBody{Inputs: []ledger.TxIn{ledger.GenesisTxIn(addr)}, Outputs: []ledger.TxOut{{Address: addr, Coin: coin - 200_000}}}
	fee, err := body.MinFee(ledger.DefaultParams(), 1)
	if err != nil {
		t.Fatal(err)
	}
	body.Fee, body.Outputs[0].Coin = fee, coin-fee
	tx, err := body.Build([]ed25519.PrivateKey{key})
	if err != nil {
		t.Fatal(err)
	}
	return tx, utxo
}

func submit(t *testing.T, h http.Handler, tx []byte) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/submit/tx", bytes.NewReader(tx))
	req.Header.Set("Content-Type", "application/cbor")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// A submit that gets no turn at the mempool before its timeout — the add
// lock held by a removal that revalidates slowly — is 503, not the tx's
// fault; once the lock is free the same tx is admitted.
func TestSubmitWithoutATurnIs503(t *testing.T) {
	utxo := ledger.MapUTxO{}
	var txs []*ledger.Tx
	for seed := range byte(3) {
		tx, funds := payment(t, seed+1, 50_000_000_000)
		maps.Copy(utxo, funds)
		txs = append(txs, tx)
	}
	var stall sync.Once
	stalled, release := make(chan struct{}), make(chan struct{})
	pool, err := mempool.New(mempool.Options{
		TipLedger: func() (ledger.UTxO, block.Tip, func(), error) { return utxo, block.Tip{}, func() {}, nil },
		Reapply: func(p ledger.Params, u ledger.UTxO, slot uint64, tx *ledger.Tx) (*ledger.Diff, error) {
			stall.Do(func() { close(stalled); <-release })
			return ledger.Reapply(p, u, slot, tx)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := New(Options{Mempool: pool, MaxTxSize: 16384, SubmitTimeout: 100 * time.Millisecond, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range txs[:2] {
		if code, reply := submit(t, s.Handler(), tx.Bytes()); code != http.StatusAccepted {
			t.Fatalf("admitting: %d %s", code, reply)
		}
	}
	// Removing the first tx revalidates the second under the add lock,
	// and stalls there.
	removed := make(chan error, 1)
	go func() {
		_, err := pool.RemoveTxs(context.Background(), []block.Hash{txs[0].Hash()})
		removed <- err
	}()
	<-stalled
	code, reply := submit(t, s.Handler(), txs[2].Bytes())
	close(release)
	if err := <-removed; err != nil {
		t.Fatal(err)
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(reply, "busy") {
		t.Fatalf("submit without a turn: %d %s, want 503 busy", code, reply)
	}
	if code, reply := submit(t, s.Handler(), txs[2].Bytes()); code != http.StatusAccepted {
		t.Fatalf("the same tx once the lock is free: %d %s", code, reply)
	}
	if code, reply := submit(t, s.Handler(), txs[2].Bytes()); code != http.StatusBadRequest {
		t.Fatalf("a tx already held: %d %s, want 400", code, reply)
	}
}

// TestAnswersNameTxIDs: the submit answers with the tx id, rejections name
// the tx id, and the mempool is looked up by tx id — never by the hash of
// the whole tx, which no Cardano tool knows.
func TestAnswersNameTxIDs(t *testing.T) {
	tx, utxo := payment(t, 7, 50_000_000_000)
	// The same body signed twice: the same tx id, another tx hash; it spends
	// what tx spends.
	twin, err := ledger.BuildTx(tx.Inputs, tx.Outputs, tx.Fee, nil, []ed25519.PrivateKey{
		ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)), ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32)),
	})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := mempool.New(mempool.Options{
		TipLedger: func() (ledger.UTxO, block.Tip, func(), error) { return utxo, block.Tip{}, func() {}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := New(Options{Mempool: pool, MaxTxSize: 16384, SubmitTimeout: time.Second, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	id, hash := block.Hash(tx.ID()).String(), block.Hash(tx.Hash()).String()
	if code, reply := submit(t, s.Handler(), tx.Bytes()); code != http.StatusAccepted || reply != `"`+id+`"`+"\n" {
		t.Fatalf("submit: %d %q, want 202 with tx id %s", code, reply, id)
	}
	for _, tc := range []struct {
		name string
		tx   *ledger.Tx
		rule string
	}{{"again", tx, apitypes.RuleInMempool}, {"same body, other witnesses", twin, "fee-too-small"}} {
		code, reply := submit(t, s.Handler(), tc.tx.Bytes())
		if code != http.StatusBadRequest || !strings.Contains(reply, id) || strings.Contains(reply, block.Hash(tc.tx.Hash()).String()) {
			t.Errorf("submit %s: %d %s; want 400 naming tx id %s", tc.name, code, reply, id)
		}
		if !strings.Contains(reply, `"rule":"`+tc.rule+`"`) {
			t.Errorf("submit %s: %s; want rule %q", tc.name, reply, tc.rule)
		}
	}
	if code, reply := submit(t, s.Handler(), []byte{0x80}); code != http.StatusBadRequest || !strings.Contains(reply, `"rule":"malformed"`) {
		t.Errorf("submit of an empty CBOR array: %d %s; want 400 with rule malformed", code, reply)
	}
	get := func(path string) int {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	if code := get("/api/mempool/" + id); code != http.StatusOK {
		t.Errorf("GET /api/mempool/{tx id}: %d, want 200", code)
	}
	if code := get("/api/mempool/" + hash); code != http.StatusNotFound {
		t.Errorf("GET /api/mempool/{tx hash}: %d, want 404", code)
	}
}

// A submission the node's edge refuses is answered 503 at once, with
// Retry-After and the reason, before its bytes are even decoded; once the
// edge opens the same tx is admitted.
func TestSubmitRefusedAtTheEdge(t *testing.T) {
	tx, utxo := payment(t, 9, 50_000_000_000)
	pool, err := mempool.New(mempool.Options{
		TipLedger: func() (ledger.UTxO, block.Tip, func(), error) { return utxo, block.Tip{}, func() {}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	figures := admission.Figures{Now: time.Now(), ClockSlot: 1000, TipSlot: 10}
	gate, err := admission.NewGate(admission.Options{}, func() admission.Figures { return figures }, nil)
	if err != nil {
		t.Fatal(err)
	}
	gate.Update()
	s, err := New(Options{Mempool: pool, Admission: gate, MaxTxSize: 16384, SubmitTimeout: time.Second, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{tx.Bytes(), []byte("not a tx")} {
		req := httptest.NewRequest(http.MethodPost, "/api/submit/tx", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/cbor")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "5" || !strings.Contains(rec.Body.String(), "syncing") {
			t.Fatalf("refused submit: %d, Retry-After %q, %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
		}
	}
	if n := gate.Stats().Refused["api"]["syncing"]; n != 2 {
		t.Fatalf("%d refusals counted, want 2", n)
	}
	if pool.Snapshot().Len() != 0 {
		t.Fatal("a refused tx reached the mempool")
	}
	figures.TipSlot = 999
	gate.Update()
	if code, reply := submit(t, s.Handler(), tx.Bytes()); code != http.StatusAccepted {
		t.Fatalf("once the edge opens: %d %s", code, reply)
	}
}
