package api

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// paymentChain is n signed txs of a fresh key, each spending the one
// before's output (the first the key's genesis funds) and paying it back
// less the fee, and the UTxO that holds the funds.
func paymentChain(t *testing.T, seed byte, coin uint64, n int) ([]*ledger.Tx, ledger.MapUTxO) {
	t.Helper()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
	addr := ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	utxo, err := ledger.GenesisUTxO(map[string]uint64{hex.EncodeToString(addr): coin})
	if err != nil {
		t.Fatal(err)
	}
	in := ledger.GenesisTxIn(addr)
	var txs []*ledger.Tx
	for range n {
		tx, err := ledger.BuildPayment(ledger.DefaultParams(), []ledger.TxIn{in}, coin, nil, addr, nil, []ed25519.PrivateKey{key})
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
		in, coin = ledger.TxIn{TxID: tx.ID(), Index: 0}, tx.Outputs[0].Coin
	}
	return txs, utxo
}

// batchServer is an API over a fresh mempool on utxo.
func batchServer(t *testing.T, utxo ledger.MapUTxO, opts Options, pool mempool.Options) (*Server, *mempool.Mempool) {
	t.Helper()
	pool.TipLedger = func() (ledger.UTxO, block.Tip, func(), error) { return utxo, block.Tip{}, func() {}, nil }
	m, err := mempool.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	opts.Mempool, opts.Registry = m, prometheus.NewRegistry()
	if opts.MaxTxSize == 0 {
		opts.MaxTxSize = 16384
	}
	if opts.SubmitTimeout == 0 {
		opts.SubmitTimeout = time.Second
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

// batchOf is the body of a batch: a CBOR array of the txs' bytes as they
// are.
func batchOf(txs ...[]byte) []byte {
	body := []byte{0x99, 0, 0} // an array, its count in the next two bytes
	body[1], body[2] = byte(len(txs)>>8), byte(len(txs))
	for _, tx := range txs {
		body = append(body, tx...)
	}
	return body
}

func txBytes(txs ...*ledger.Tx) [][]byte {
	var raw [][]byte
	for _, tx := range txs {
		raw = append(raw, tx.Bytes())
	}
	return raw
}

// submitBatch posts body to /api/submit/txs and returns the status, the
// per-tx answers of a 200 and the body.
func submitBatch(t *testing.T, h http.Handler, body []byte) (int, []apitypes.TxAnswer, *httptest.ResponseRecorder) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/submit/txs", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/cbor")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var answers []apitypes.TxAnswer
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &answers); err != nil {
			t.Fatalf("the answer %q: %v", rec.Body, err)
		}
	}
	return rec.Code, answers, rec
}

func idOf(tx *ledger.Tx) string { id := tx.ID(); return hex.EncodeToString(id[:]) }

// TestSubmitBatchInOrder: a chain of txs, each spending the one before, is
// admitted in one batch, in the batch's order, each answered with its tx
// id.
func TestSubmitBatchInOrder(t *testing.T) {
	chain, utxo := paymentChain(t, 1, 50_000_000_000, 5)
	s, pool := batchServer(t, utxo, Options{}, mempool.Options{})
	code, answers, rec := submitBatch(t, s.Handler(), batchOf(txBytes(chain...)...))
	if code != http.StatusOK || len(answers) != len(chain) {
		t.Fatalf("batch: %d %s, want 200 with %d answers", code, rec.Body, len(chain))
	}
	for i, a := range answers {
		if a != (apitypes.TxAnswer{Status: http.StatusAccepted, ID: idOf(chain[i])}) {
			t.Errorf("tx %d: %+v, want 202 with id %s", i, a, idOf(chain[i]))
		}
	}
	var held []block.Hash
	for e := range pool.Snapshot().All() {
		held = append(held, e.Tx.Hash())
	}
	for i, tx := range chain {
		if i >= len(held) || held[i] != tx.Hash() {
			t.Fatalf("the mempool holds %d txs, not the batch's in its order (tx %d)", len(held), i)
		}
	}
}

// TestSubmitBatchMixed: each tx of a batch gets its own answer, as the
// single submit would give it: an invalid tx is rejected by the ledger's
// rule, and those spending its output after it, while the valid txs around
// it are admitted.
func TestSubmitBatchMixed(t *testing.T) {
	chain, utxo := paymentChain(t, 2, 50_000_000_000, 2)
	other, funds := paymentChain(t, 3, 50_000_000_000, 1)
	maps.Copy(utxo, funds)
	// The same body as chain[0] signed by another key too: its witness
	// makes it larger, so its fee is too small.
	twin, err := ledger.BuildTx(chain[0].Inputs, chain[0].Outputs, chain[0].Fee, nil, []ed25519.PrivateKey{
		ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32)), ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)),
	})
	if err != nil {
		t.Fatal(err)
	}
	s, pool := batchServer(t, utxo, Options{}, mempool.Options{})
	big := append([]byte{0x5a, 0, 0, 0x40, 0}, make([]byte, 16384)...) // a byte string of 16 KiB: over the max tx size
	code, answers, rec := submitBatch(t, s.Handler(), batchOf(twin.Bytes(), chain[1].Bytes(), []byte{0x80}, other[0].Bytes(), big, other[0].Bytes()))
	if code != http.StatusOK || len(answers) != 6 {
		t.Fatalf("batch: %d %s, want 200 with 6 answers", code, rec.Body)
	}
	want := []struct {
		status int
		rule   string
		id     string
	}{
		{http.StatusBadRequest, "fee-too-small", ""},
		{http.StatusBadRequest, "input-missing", ""}, // its parent was rejected
		{http.StatusBadRequest, "malformed", ""},
		{http.StatusAccepted, "", idOf(other[0])},
		{http.StatusRequestEntityTooLarge, "", ""},
		{http.StatusBadRequest, apitypes.RuleInMempool, ""},
	}
	for i, w := range want {
		a := answers[i]
		if a.Status != w.status || a.Rule != w.rule || a.ID != w.id || (a.Status != http.StatusAccepted) != (a.Error != "") {
			t.Errorf("tx %d: %+v, want status %d, rule %q, id %q", i, a, w.status, w.rule, w.id)
		}
	}
	if !strings.Contains(answers[0].Error, idOf(twin)) {
		t.Errorf("the rejection %q does not name the tx by its id", answers[0].Error)
	}
	if n := pool.Snapshot().Len(); n != 1 {
		t.Errorf("the mempool holds %d txs, want the one valid", n)
	}
	// The valid chain goes in once its first tx is the right one.
	if _, answers, _ := submitBatch(t, s.Handler(), batchOf(txBytes(chain...)...)); len(answers) != 2 || answers[0].Status != http.StatusAccepted || answers[1].Status != http.StatusAccepted {
		t.Errorf("the chain after its twin: %+v, want both admitted", answers)
	}
}

// TestSubmitBatchLimits: a batch over its bounds, of txs or of bytes, is
// 413 and one that is not a CBOR array of items 400, before any of its
// txs is tried; the bounds take their defaults.
func TestSubmitBatchLimits(t *testing.T) {
	chain, utxo := paymentChain(t, 4, 50_000_000_000, 3)
	s, pool := batchServer(t, utxo, Options{MaxTxSize: chain[0].Size(), MaxBatchTxs: 2, MaxBatchBytes: 2 * chain[0].Size()}, mempool.Options{})
	for _, tc := range []struct {
		name string
		body []byte
		code int
		want string
	}{
		{"three txs, two allowed", batchOf([]byte{0x80}, []byte{0x80}, []byte{0x80}), http.StatusRequestEntityTooLarge, ErrBatchTooLarge.Error()},
		// Two txs and the array's head: over twice a tx's bytes.
		{"over the bytes", batchOf(txBytes(chain[0], chain[1])...), http.StatusRequestEntityTooLarge, "batch over the limit of"},
		{"a byte string", []byte{0x41, 0x00}, http.StatusBadRequest, ErrBatchMalformed.Error()},
		{"a map", []byte{0xa0}, http.StatusBadRequest, ErrBatchMalformed.Error()},
		{"an item cut short", []byte{0x82, 0x80, 0x82, 0x01}, http.StatusBadRequest, ErrBatchMalformed.Error()},
		{"bytes after the array", []byte{0x81, 0x80, 0x00}, http.StatusBadRequest, ErrBatchMalformed.Error()},
		{"an indefinite array", []byte{0x9f, 0x80, 0xff}, http.StatusBadRequest, ErrBatchMalformed.Error()},
	} {
		code, _, rec := submitBatch(t, s.Handler(), tc.body)
		if code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want %d %q", tc.name, code, rec.Body, tc.code, tc.want)
		}
	}
	if n := pool.Snapshot().Len(); n != 0 {
		t.Errorf("%d txs of refused batches reached the mempool", n)
	}
	if code, answers, rec := submitBatch(t, s.Handler(), batchOf()); code != http.StatusOK || len(answers) != 0 || strings.TrimSpace(rec.Body.String()) != "[]" {
		t.Errorf("an empty batch: %d %s, want 200 []", code, rec.Body)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/submit/txs", bytes.NewReader(batchOf(chain[0].Bytes())))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("a batch sent as JSON: %d, want 415", rec.Code)
	}

	defaults, _ := batchServer(t, utxo, Options{}, mempool.Options{})
	if o := defaults.opts; o.MaxBatchTxs != apitypes.DefaultMaxBatchTxs || o.MaxBatchBytes != apitypes.DefaultMaxBatchBytes {
		t.Errorf("default bounds %d txs, %d bytes", o.MaxBatchTxs, o.MaxBatchBytes)
	}
}

// TestSubmitBatchRefused: a batch the node's edge refuses is answered 503
// whole, with Retry-After and the reason, before its bytes are decoded,
// and counts as one refusal; a tx the mempool has no room for within the
// timeout is its own 503, and so are the txs after it.
func TestSubmitBatchRefused(t *testing.T) {
	chain, utxo := paymentChain(t, 5, 50_000_000_000, 4)
	figures := admission.Figures{Now: time.Now(), ClockSlot: 1000, TipSlot: 10}
	gate, err := admission.NewGate(admission.Options{}, func() admission.Figures { return figures }, nil)
	if err != nil {
		t.Fatal(err)
	}
	gate.Update()
	// Room for two of the txs; a third waits for room until the timeout.
	room := chain[0].Size() + chain[1].Size() + chain[2].Size()/2
	s, pool := batchServer(t, utxo, Options{Admission: gate, SubmitTimeout: 50 * time.Millisecond}, mempool.Options{CapacityBytes: room})
	for _, body := range [][]byte{batchOf(txBytes(chain...)...), []byte("not a batch")} {
		code, _, rec := submitBatch(t, s.Handler(), body)
		if code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "5" || !strings.Contains(rec.Body.String(), "refused (syncing)") {
			t.Fatalf("a batch at a closed edge: %d, Retry-After %q, %s", code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	if n := gate.Stats().Refused["api"]["syncing"]; n != 2 {
		t.Fatalf("%d refusals counted, want one a batch", n)
	}
	if pool.Snapshot().Len() != 0 {
		t.Fatal("a refused batch reached the mempool")
	}

	figures.TipSlot = 999
	gate.Update()
	code, answers, rec := submitBatch(t, s.Handler(), batchOf(txBytes(chain...)...))
	if code != http.StatusOK || len(answers) != 4 {
		t.Fatalf("batch: %d %s", code, rec.Body)
	}
	for i, a := range answers[:2] {
		if a.Status != http.StatusAccepted || a.ID != idOf(chain[i]) {
			t.Errorf("tx %d: %+v, want admitted", i, a)
		}
	}
	if a := answers[2]; a.Status != http.StatusServiceUnavailable || a.Reason != apitypes.ReasonMempoolFull || a.RetryAfter != 1 || a.Error != "mempool full" {
		t.Errorf("the tx without room: %+v, want 503 mempool full, retry after 1 s", a)
	}
	// The tx after it waits for room no longer than the batch's timeout.
	if a := answers[3]; a.Status != http.StatusServiceUnavailable || (a.Reason != apitypes.ReasonMempoolBusy && a.Reason != apitypes.ReasonMempoolFull) || a.RetryAfter != 1 {
		t.Errorf("the tx after it: %+v, want 503 for the mempool", a)
	}
	if st := pool.Stats(); st.Added != 2 {
		t.Errorf("%d adds, want the two with room", st.Added)
	}
}

// TestBatchUploadDeadline: a batch's body has the time its length takes at
// the minimum upload rate, up to the batch's bound, where a tx's body of
// unknown length has no more than a tx's bound takes.
func TestBatchUploadDeadline(t *testing.T) {
	s, _ := batchServer(t, ledger.MapUTxO{}, Options{}, mempool.Options{})
	l, o := s.limits, s.opts
	f := &flight{start: time.Now()}
	at := func(bytes int) time.Time {
		return f.start.Add(o.UploadGrace + time.Duration(float64(bytes)/float64(o.MinUploadRate)*float64(time.Second)))
	}
	request := func(path string) *http.Request { return httptest.NewRequest(http.MethodPost, path, nil) }
	for _, tc := range []struct {
		name   string
		path   string
		length int64
		want   time.Time
	}{
		{"a full batch", "/api/submit/txs", int64(o.MaxBatchBytes), at(o.MaxBatchBytes)},
		{"a batch of unknown length", "/api/submit/txs", -1, at(o.MaxBatchBytes)},
		{"a batch over the bound", "/api/submit/txs", 1 << 30, at(o.MaxBatchBytes)},
		{"a tx of unknown length", "/api/submit/tx", -1, at(o.MaxTxSize)},
		{"a tx claiming a batch's length", "/api/submit/tx", int64(o.MaxBatchBytes), at(o.MaxTxSize)},
	} {
		if got := l.bodyDeadline(f, tc.length, l.bodyLimit(request(tc.path))); !got.Equal(tc.want) {
			t.Errorf("%s: deadline %v after the start, want %v", tc.name, got.Sub(f.start), tc.want.Sub(f.start))
		}
	}
	if at(o.MaxBatchBytes).After(f.start.Add(o.ReadTimeout)) {
		t.Errorf("a full batch at the minimum rate takes longer than ReadTimeout %v", o.ReadTimeout)
	}
}
