package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

var (
	// ErrBatchMalformed: the body of POST /api/submit/txs is not one
	// definite CBOR array of well-formed items.
	ErrBatchMalformed = errors.New("batch is not a CBOR array of txs")
	// ErrBatchTooLarge: the batch holds more txs than the limit.
	ErrBatchTooLarge = errors.New("batch over the limit of txs")
)

// handleSubmitBatch is POST /api/submit/txs: the body is a CBOR array of
// signed txs, each as POST /api/submit/tx takes it, at most MaxBatchTxs of
// them in MaxBatchBytes. The txs are added to the mempool together, in the
// array's order (mempool.AddTxs: their signatures checked together, off
// the add lock), so a tx may spend an output of one before it; the answer,
// 200, is a JSON array of an apitypes.TxAnswer per tx, in order. A rejected tx does
// not end the batch: the txs after it are tried, and those spending its
// outputs are rejected in turn. The batch waits for room and turns no
// longer than a single tx: a tx that would wait past the timeout is
// answered 503, and so are those after it.
//
// The batch as a whole is answered as the single submit: 415, 408, 413
// over MaxBatchBytes or MaxBatchTxs, 400 for a body that is not one CBOR
// array, and 503 with Retry-After when the node's edge refuses txs now —
// decided once for the batch, before anything is read, so that a refusal
// costs the same whatever the batch holds.
func (s *Server) handleSubmitBatch(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/cbor" {
		writeError(w, http.StatusUnsupportedMediaType, errors.New("Content-Type must be application/cbor"))
		return
	}
	if !s.edgeAdmits(w) {
		return
	}
	raw, ok := readBody(w, r, int64(s.opts.MaxBatchBytes), "batch")
	if !ok {
		return
	}
	items, err := splitBatch(raw, s.opts.MaxBatchTxs)
	switch {
	case errors.Is(err, ErrBatchTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, err)
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, err)
		return
	}
	answers := make([]apitypes.TxAnswer, len(items))
	cpuwork.Do(r.Context(), cpuwork.Intake, func(ctx context.Context) {
		txs := make([]*ledger.Tx, 0, len(items))
		at := make([]int, 0, len(items)) // the item each tx was decoded from
		for i, item := range items {
			tx, answer := s.decodeTx(item)
			if tx == nil {
				answers[i] = answer
				continue
			}
			txs, at = append(txs, tx), append(at, i)
		}
		// One timeout for the batch: a batch waits for room no longer
		// than a single tx would.
		ctx, cancel := context.WithTimeout(ctx, s.opts.SubmitTimeout)
		defer cancel()
		for j, err := range s.opts.Mempool.AddTxs(ctx, txs) {
			answers[at[j]] = s.added(txs[j], err)
		}
	})
	writeJSON(w, http.StatusOK, answers)
}

// edgeAdmits asks the node's edge whether it takes txs now and, if not,
// answers 503 with Retry-After and the reason. Before anything is read or
// decoded: a refusal must cost next to nothing, or the load it sheds would
// still take the CPU.
func (s *Server) edgeAdmits(w http.ResponseWriter) bool {
	if s.opts.Admission == nil {
		return true
	}
	d := s.opts.Admission.Admit(admission.Local)
	if d.Admits() {
		return true
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(d.RetryAfter.Round(time.Second).Seconds()))))
	writeError(w, http.StatusServiceUnavailable, fmt.Errorf("refused (%s): %s; try again later", d.Reason, d.Detail))
	return false
}

// addTx decodes a tx and adds it to the mempool within ctx, and says what
// became of it, as the single submit answers.
func (s *Server) addTx(ctx context.Context, raw []byte) apitypes.TxAnswer {
	tx, answer := s.decodeTx(raw)
	if tx == nil {
		return answer
	}
	return s.added(tx, s.opts.Mempool.Add(ctx, tx))
}

// decodeTx decodes a submitted tx, or says why it is refused: over the
// max tx size, or not a tx.
func (s *Server) decodeTx(raw []byte) (*ledger.Tx, apitypes.TxAnswer) {
	if len(raw) > s.opts.MaxTxSize {
		return nil, apitypes.TxAnswer{Status: http.StatusRequestEntityTooLarge, Error: fmt.Sprintf("tx over the limit of %d bytes", s.opts.MaxTxSize)}
	}
	tx, err := ledger.DecodeTx(raw)
	if err != nil {
		return nil, rejection(err)
	}
	return tx, apitypes.TxAnswer{}
}

// added is the answer to a tx the mempool's add of which returned err.
func (s *Server) added(tx *ledger.Tx, err error) apitypes.TxAnswer {
	switch {
	case err == nil:
		s.latency.admitted(tx.Hash(), time.Now())
		id := tx.ID()
		return apitypes.TxAnswer{Status: http.StatusAccepted, ID: hex.EncodeToString(id[:])}
	case errors.Is(err, mempool.ErrFull):
		return apitypes.TxAnswer{Status: http.StatusServiceUnavailable, Reason: apitypes.ReasonMempoolFull, RetryAfter: 1, Error: "mempool full"}
	case errors.Is(err, mempool.ErrBusy):
		// No turn to add within the timeout, or not tried after a tx of
		// its batch that had none.
		return apitypes.TxAnswer{Status: http.StatusServiceUnavailable, Reason: apitypes.ReasonMempoolBusy, RetryAfter: 1, Error: err.Error()}
	case mempool.IsRejection(err), errors.Is(err, mempool.ErrDuplicate):
		return rejection(err)
	default:
		return apitypes.TxAnswer{Status: http.StatusInternalServerError, Error: err.Error()}
	}
}

// rejection is the 400 of a tx that broke a rule: the error and the code
// of the ledger rule (or apitypes.RuleInMempool), so that clients decide by the
// code and never parse the message.
func rejection(err error) apitypes.TxAnswer {
	a := apitypes.TxAnswer{Status: http.StatusBadRequest, Error: err.Error()}
	if rule, ok := ledger.RuleOf(err); ok {
		a.Rule = rule.Code()
	} else if errors.Is(err, mempool.ErrDuplicate) {
		a.Rule = apitypes.RuleInMempool
	}
	return a
}

// batchDecoding splits a batch into its items: one nesting level deeper
// than a tx's own bound (the ledger's), so that any tx the single submit
// decodes fits in a batch; whatever else a tx breaks is its own 400.
var batchDecoding = func() cbor.DecMode {
	dm, err := cbor.DecOptions{MaxNestedLevels: 33, MaxArrayElements: 1 << 16, MaxMapPairs: 1 << 16}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// splitBatch is the items of a batch: a definite CBOR array of at most
// maxTxs well-formed items and nothing after it. The count is read from
// the array's head, before any item is looked at.
func splitBatch(raw []byte, maxTxs int) ([][]byte, error) {
	count, ok := arrayCount(raw)
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: not a definite array", ErrBatchMalformed)
	case count > uint64(maxTxs):
		return nil, fmt.Errorf("%w of %d: %d txs", ErrBatchTooLarge, maxTxs, count)
	}
	var items []cbor.RawMessage
	if err := batchDecoding.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBatchMalformed, err)
	}
	txs := make([][]byte, len(items))
	for i, item := range items {
		txs[i] = item
	}
	return txs, nil
}

// arrayCount reads the count of the definite CBOR array raw begins with.
func arrayCount(raw []byte) (uint64, bool) {
	if len(raw) == 0 || raw[0]>>5 != 4 {
		return 0, false
	}
	info := raw[0] & 0x1f
	switch {
	case info < 24:
		return uint64(info), true
	case info > 27:
		return 0, false // indefinite, or reserved
	}
	n := 1 << (info - 24) // 1, 2, 4 or 8 bytes follow
	if len(raw) < 1+n {
		return 0, false
	}
	var count uint64
	for _, b := range raw[1 : 1+n] {
		count = count<<8 | uint64(b)
	}
	return count, true
}
