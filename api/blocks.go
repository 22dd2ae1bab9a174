package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
)

// ErrClosureMissing answers a block whose certified closure the LeiosDB
// lost (deleted, or its newest WAL cut) and the node is fetching again
// from its peers: 503, for it will be served once the closure is back.
var ErrClosureMissing = errors.New("certified closure not held yet")

// handleBlocks is GET /api/blocks?from=N&count=M: the selected chain's
// blocks from number N (default 1), at most M of them (default and most
// apitypes.MaxBlocksPerRequest), oldest first, and fewer when the answer would pass
// Options.MaxAnswerBytes: it ends before the block that would take it past
// (a first block alone may), and the client asks again from there. So a
// request holds one page and one block, never the answer the count would
// make — a thousand CertRBs name up to 13.9 million txs. A CertRB's closure
// is named from the EB body, so the walk reads no tx.
func (s *Server) handleBlocks(w http.ResponseWriter, r *http.Request) {
	from, count := uint64(1), uint64(apitypes.MaxBlocksPerRequest)
	var err error
	if v := r.URL.Query().Get("from"); v != "" {
		if from, err = strconv.ParseUint(v, 10, 64); err != nil || from == 0 {
			writeError(w, http.StatusBadRequest, errors.New("from must be a block number ≥ 1"))
			return
		}
	}
	if v := r.URL.Query().Get("count"); v != "" {
		if count, err = strconv.ParseUint(v, 10, 64); err != nil {
			writeError(w, http.StatusBadRequest, errors.New("count must be a number"))
			return
		}
	}
	count = min(count, apitypes.MaxBlocksPerRequest)
	tip := s.opts.Chain.Tip().BlockNumber
	page := []byte{'['}
	var parent *block.Header
	if from > 1 {
		if blk, err := s.opts.Chain.BlockByNumber(from - 1); err == nil {
			parent = blk.Header
		}
	}
	for n, blocks := from, uint64(0); n <= tip && blocks < count; n++ {
		blk, err := s.opts.Chain.BlockByNumber(n)
		if err != nil || parent != nil && blk.Header.Prev() != parent.Hash() {
			break // the selection moved under us: what was read is still a chain
		}
		bt, err := s.blockTxs(blk, parent)
		if errors.Is(err, ErrClosureMissing) {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(s.opts.Leios.Refill().RetryAfter.Round(time.Second).Seconds()))))
			writeError(w, http.StatusServiceUnavailable, err)
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		item, err := json.Marshal(bt)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		if blocks > 0 && len(page)+1+len(item)+2 > s.opts.MaxAnswerBytes {
			break
		}
		if blocks > 0 {
			page = append(page, ',')
		}
		page = append(page, item...)
		blocks++
		parent = blk.Header
	}
	writeRawJSON(w, http.StatusOK, append(page, ']', '\n'))
}

func (s *Server) blockTxs(blk *block.Block, parent *block.Header) (apitypes.BlockTxs, error) {
	h := blk.Header
	bt := apitypes.BlockTxs{Number: h.BlockNumber, Slot: h.Slot, Hash: h.Hash().String(), Txs: make([]string, len(blk.Body.Txs))}
	for i, tx := range blk.Body.Txs {
		bt.Txs[i] = block.HashBytes(tx).String()
	}
	if a := h.Announcement; a != nil {
		bt.Announces = &apitypes.EBRef{Slot: h.Slot, EbHash: a.EbHash.String()}
	}
	if p, ok := consensus.CertifiedPoint(blk, parent); ok {
		bt.Certifies = &apitypes.EBRef{Slot: p.Slot, EbHash: p.Hash.String()}
		eb, held, err := s.opts.Leios.Body(p.Hash)
		if err != nil {
			return bt, err
		}
		if !held {
			refill := s.opts.Leios.Refill()
			return bt, fmt.Errorf("%w: block %d certifies %s; %d certified closures missing since %s, fetched again from peers",
				ErrClosureMissing, h.BlockNumber, p, max(1, refill.Missing), refill.Since.Format(time.RFC3339))
		}
		for _, e := range eb.Txs {
			bt.Closure = append(bt.Closure, e.TxHash.String())
		}
	}
	return bt, nil
}
