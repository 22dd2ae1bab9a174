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

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// handleSubmit is POST /api/submit/tx, as cardano-submit-api: the body is
// the signed tx's CBOR; 202 with the tx id, 400 with the ledger rule that
// failed (or "already in the mempool"), naming the tx by its tx id, and the
// rule's code (writeRejection), 413 for
// a body over the max tx size, 408 for one that does not arrive in time,
// 503 with Retry-After when the node's edge refuses txs now (it is behind:
// see package admission), the mempool stays full or the add gets no turn
// before the timeout, 500 for a local failure.
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/cbor" {
		writeError(w, http.StatusUnsupportedMediaType, errors.New("Content-Type must be application/cbor"))
		return
	}
	// Before anything is read or decoded: a refusal must cost next to
	// nothing, or the load it sheds would still take the CPU.
	if s.opts.Admission != nil {
		if d := s.opts.Admission.Admit(admission.Local); !d.Admits() {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(d.RetryAfter.Round(time.Second).Seconds()))))
			writeError(w, http.StatusServiceUnavailable, fmt.Errorf("refused (%s): %s; try again later", d.Reason, d.Detail))
			return
		}
	}
	raw, ok := readBody(w, r, int64(s.opts.MaxTxSize), "tx")
	if !ok {
		return
	}
	var tx *ledger.Tx
	var err error
	cpuwork.Do(r.Context(), cpuwork.Intake, func(ctx context.Context) {
		if tx, err = ledger.DecodeTx(raw); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, s.opts.SubmitTimeout)
		defer cancel()
		err = s.opts.Mempool.Add(ctx, tx)
	})
	if tx == nil {
		writeRejection(w, err)
		return
	}
	switch {
	case err == nil:
		s.latency.admitted(tx.Hash(), time.Now())
		id := tx.ID()
		writeJSON(w, http.StatusAccepted, hex.EncodeToString(id[:]))
	case errors.Is(err, mempool.ErrFull):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, errors.New("mempool full"))
	case errors.Is(err, mempool.ErrBusy):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, errors.New("mempool busy: no turn to add within the timeout"))
	case mempool.IsRejection(err), errors.Is(err, mempool.ErrDuplicate):
		writeRejection(w, err)
	default:
		writeError(w, http.StatusInternalServerError, err)
	}
}

// RuleInMempool is the "rule" of a 400 answer to a submit of a tx the
// mempool already holds; a ledger rule's failure has the rule's code
// (ledger.Rule.Code) instead.
const RuleInMempool = "in-mempool"

// writeRejection is a 400 answer to a submit, {"error": …, "rule": code}:
// the code of the ledger rule the tx broke, or RuleInMempool, so that
// clients decide by the code and never parse the message.
func writeRejection(w http.ResponseWriter, err error) {
	answer := map[string]string{"error": err.Error()}
	if rule, ok := ledger.RuleOf(err); ok {
		answer["rule"] = rule.Code()
	} else if errors.Is(err, mempool.ErrDuplicate) {
		answer["rule"] = RuleInMempool
	}
	writeJSON(w, http.StatusBadRequest, answer)
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
