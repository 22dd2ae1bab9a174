package api

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/ledger"
)

// handleSubmit is POST /api/submit/tx, as cardano-submit-api: the body is
// the signed tx's CBOR; 202 with the tx id, 400 with the ledger rule that
// failed (or "already in the mempool"), naming the tx by its tx id, and the
// rule's code (writeAnswer), 413 for a body over the max tx size, 408 for one that does not arrive in time,
// 503 with Retry-After when the node's edge refuses txs now (it is behind:
// see package admission), the mempool stays full or the add gets no turn
// before the timeout, 500 for a local failure.
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/cbor" {
		writeError(w, http.StatusUnsupportedMediaType, errors.New("Content-Type must be application/cbor"))
		return
	}
	if !s.edgeAdmits(w) {
		return
	}
	raw, ok := readBody(w, r, int64(s.opts.MaxTxSize), "tx")
	if !ok {
		return
	}
	var answer apitypes.TxAnswer
	cpuwork.Do(r.Context(), cpuwork.Intake, func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, s.opts.SubmitTimeout)
		defer cancel()
		answer = s.addTx(ctx, raw)
	})
	writeAnswer(w, answer)
}

// writeAnswer writes a tx's answer alone: the tx id for a 202; a 400 as
// {"error": …, "rule": code}, the code of the ledger rule the tx broke or
// apitypes.RuleInMempool, so that clients decide by the code and never parse the
// message; a 503 with its Retry-After; {"error": …} otherwise.
func writeAnswer(w http.ResponseWriter, a apitypes.TxAnswer) {
	switch a.Status {
	case http.StatusAccepted:
		writeJSON(w, a.Status, a.ID)
	case http.StatusBadRequest:
		answer := map[string]string{"error": a.Error}
		if a.Rule != "" {
			answer["rule"] = a.Rule
		}
		writeJSON(w, a.Status, answer)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(max(1, a.RetryAfter)))
		writeError(w, a.Status, errors.New(a.Error))
	default:
		writeError(w, a.Status, errors.New(a.Error))
	}
}

// handleUTxO is GET /api/utxo/{txid}/{index}: the output if unspent at the
// selected tip.
func (s *Server) handleUTxO(w http.ResponseWriter, r *http.Request) {
	id, err := block.ParseHash(r.PathValue("txid"))
	index, errIndex := strconv.ParseUint(r.PathValue("index"), 10, 16)
	if err != nil || errIndex != nil {
		writeError(w, http.StatusBadRequest, errors.New("want /api/utxo/{64 hex digits}/{index}"))
		return
	}
	view, _ := s.opts.Chain.TipLedger()
	defer view.Close()
	out, ok, err := view.Lookup(ledger.TxIn{TxID: id, Index: uint32(index)})
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
	case !ok:
		writeError(w, http.StatusNotFound, errors.New("not unspent at the selected tip"))
	default:
		writeJSON(w, http.StatusOK, map[string]any{"address": ledger.FormatAddress(out.Address), "coin": out.Coin})
	}
}

// handleMempoolTx is GET /api/mempool/{txid}: whether the tx with this tx
// id (Blake2b-256 of its body, what the submit answered) is in the mempool.
func (s *Server) handleMempoolTx(w http.ResponseWriter, r *http.Request) {
	id, err := block.ParseHash(r.PathValue("txid"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	entry, ok := s.opts.Mempool.Snapshot().LookupID(id)
	if !ok {
		writeError(w, http.StatusNotFound, errors.New("not in the mempool"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ticket": entry.Ticket})
}
