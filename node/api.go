package node

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// submitTimeout is how long a local submit waits for mempool room before it
// is told the mempool is full.
const submitTimeout = 5 * time.Second

// handleSubmit is POST /api/submit/tx, as cardano-submit-api: the body is
// the signed tx's CBOR; 202 with the tx id, 400 with the ledger rule that
// failed, 503 when the mempool stays full.
func (n *Node) handleSubmit(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/cbor" {
		writeError(w, http.StatusUnsupportedMediaType, errors.New("Content-Type must be application/cbor"))
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(n.genesis.ProtocolParams.MaxTxSize)+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the tx: %w", err))
		return
	}
	tx, err := ledger.DecodeTx(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), submitTimeout)
	defer cancel()
	switch err := n.mempool.Add(ctx, tx); {
	case err == nil:
		id := tx.ID()
		writeJSON(w, http.StatusAccepted, hex.EncodeToString(id[:]))
	case errors.Is(err, mempool.ErrFull):
		writeError(w, http.StatusServiceUnavailable, errors.New("mempool full"))
	default:
		writeError(w, http.StatusBadRequest, err)
	}
}

// handleUTxO is GET /api/utxo/{txid}/{index}: the output if unspent at the
// selected tip.
func (n *Node) handleUTxO(w http.ResponseWriter, r *http.Request) {
	id, err := block.ParseHash(r.PathValue("txid"))
	index, errIndex := strconv.ParseUint(r.PathValue("index"), 10, 16)
	if err != nil || errIndex != nil {
		writeError(w, http.StatusBadRequest, errors.New("want /api/utxo/{64 hex digits}/{index}"))
		return
	}
	view, _ := n.chain.TipLedger()
	defer view.Close()
	out, ok, err := view.Lookup(ledger.TxIn{TxID: id, Index: uint32(index)})
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
	case !ok:
		writeError(w, http.StatusNotFound, errors.New("not unspent at the selected tip"))
	default:
		writeJSON(w, http.StatusOK, map[string]any{"address": hex.EncodeToString(out.Address), "coin": out.Coin})
	}
}

// handleMempoolTx is GET /api/mempool/{hash}: whether the tx with this hash
// (Blake2b-256 of the whole tx) is in the mempool.
func (n *Node) handleMempoolTx(w http.ResponseWriter, r *http.Request) {
	hash, err := block.ParseHash(r.PathValue("hash"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	entry, ok := n.mempool.Snapshot().Lookup(hash)
	if !ok {
		writeError(w, http.StatusNotFound, errors.New("not in the mempool"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ticket": entry.Ticket})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
