package apiclient

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
)

// MaxBatchTxs and MaxBatchBytes bound a batch a node takes with the API's
// default bounds: its txs, and its body (the array's head and the txs).
const (
	MaxBatchTxs   = apitypes.DefaultMaxBatchTxs
	MaxBatchBytes = apitypes.DefaultMaxBatchBytes
)

// TxResult is a node's answer to one tx of a batch: the tx id it was
// admitted under, or Err: a *RejectedError (400, the rule it broke), a
// *RefusedError (503, refused for now: send it again after RetryAfter), or
// why the node gave no answer for it.
type TxResult struct {
	ID  string
	Err error
}

// SubmitBatch is POST /api/submit/txs: the signed txs (their CBOR) in one
// request, which the node adds in order, so a tx may spend an output of
// one before it. It returns the node's answer per tx, in order; a tx the
// node refused for now ends the batch, the txs after it refused with it
// untried. The error is the batch's as a whole: a *RefusedError when the
// node's edge refused it (503; none of its txs was tried), or why there
// was no answer. A node older than the route gets the txs one POST
// /api/submit/tx each, as it would answer them in a batch, and the client
// remembers to do so.
func (a Client) SubmitBatch(ctx context.Context, txs [][]byte) ([]TxResult, error) {
	if a.noBatch != nil && a.noBatch.Load() {
		return a.submitEach(ctx, txs), nil
	}
	results, err := a.postBatch(ctx, txs)
	if errors.Is(err, errNoBatchRoute) && a.noBatch != nil {
		a.noBatch.Store(true)
		return a.submitEach(ctx, txs), nil
	}
	return results, err
}

// errNoBatchRoute: the node has no POST /api/submit/txs.
var errNoBatchRoute = errors.New("no POST /api/submit/txs")

func (a Client) postBatch(ctx context.Context, txs [][]byte) ([]TxResult, error) {
	ctx, cancel := context.WithTimeout(ctx, submitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/api/submit/txs", bytes.NewReader(BatchBody(txs)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/cbor")
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer closeBody(resp.Body)
	// An answer per tx: a hundred bytes or so each.
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16+int64(len(txs))<<9))
	if err != nil {
		return nil, fmt.Errorf("POST /api/submit/txs: reading the answer: %w", err)
	}
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusServiceUnavailable:
		return nil, refusalOf(resp, apiErrorMessage(body))
	case resp.StatusCode == http.StatusMethodNotAllowed, resp.StatusCode == http.StatusNotFound && mt != "application/json":
		// The API answers its own 404s in JSON; a bare one is a node
		// without the route.
		return nil, errNoBatchRoute
	default:
		return nil, fmt.Errorf("POST /api/submit/txs: %s: %s", resp.Status, apiErrorMessage(body))
	}
	var answers []apitypes.TxAnswer
	if err := json.Unmarshal(body, &answers); err != nil {
		return nil, fmt.Errorf("POST /api/submit/txs: the answers: %w", err)
	}
	if len(answers) != len(txs) {
		return nil, fmt.Errorf("POST /api/submit/txs: %d answers to %d txs", len(answers), len(txs))
	}
	results := make([]TxResult, len(answers))
	for i, answer := range answers {
		results[i] = resultOf(i, answer)
	}
	return results, nil
}

// resultOf reads the answer to tx i of a batch.
func resultOf(i int, a apitypes.TxAnswer) TxResult {
	switch a.Status {
	case http.StatusAccepted:
		return TxResult{ID: a.ID}
	case http.StatusBadRequest:
		return TxResult{Err: &RejectedError{Reason: a.Error, Rule: a.Rule}}
	case http.StatusServiceUnavailable:
		e := &RefusedError{Reason: a.Reason, Message: a.Error, RetryAfter: time.Duration(max(1, a.RetryAfter)) * time.Second}
		if e.Reason == "" {
			e.Reason = "unavailable"
		}
		return TxResult{Err: e}
	}
	return TxResult{Err: fmt.Errorf("POST /api/submit/txs: tx %d: %d %s: %s", i, a.Status, http.StatusText(a.Status), a.Error)}
}

// submitEach submits txs one POST /api/submit/tx each, and answers as a
// batch would: once one is refused for now, the rest are refused with it.
func (a Client) submitEach(ctx context.Context, txs [][]byte) []TxResult {
	results := make([]TxResult, len(txs))
	var refused *RefusedError
	for i, tx := range txs {
		if refused != nil {
			results[i].Err = refused
			continue
		}
		results[i].ID, results[i].Err = a.Submit(ctx, tx)
		errors.As(results[i].Err, &refused)
	}
	return results
}

// BatchBody is the body of POST /api/submit/txs: a CBOR array of the txs,
// each as it is.
func BatchBody(txs [][]byte) []byte {
	size := 9
	for _, tx := range txs {
		size += len(tx)
	}
	body := make([]byte, 0, size)
	switch n := uint64(len(txs)); {
	case n < 24:
		body = append(body, 0x80|byte(n))
	case n <= 0xff:
		body = append(body, 0x98, byte(n))
	case n <= 0xffff:
		body = binary.BigEndian.AppendUint16(append(body, 0x99), uint16(n))
	case n <= 0xffffffff:
		body = binary.BigEndian.AppendUint32(append(body, 0x9a), uint32(n))
	default:
		body = binary.BigEndian.AppendUint64(append(body, 0x9b), n)
	}
	for _, tx := range txs {
		body = append(body, tx...)
	}
	return body
}
