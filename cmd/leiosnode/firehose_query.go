package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/leiosnode/leiosnode/ledger"
)

// queryTimeout bounds one GET of the firehose's queries.
const queryTimeout = 5 * time.Second

// unspentOutput is the answer of GET /api/utxo.
type unspentOutput struct {
	Address string `json:"address"` // hex
	Coin    uint64 `json:"coin"`
}

// utxo is GET /api/utxo/{txid}/{index}: the output at in if it is unspent at
// the node's selected tip (ok), or ok=false if it is not.
func (a nodeAPI) utxo(ctx context.Context, in ledger.TxIn) (out unspentOutput, ok bool, err error) {
	path := fmt.Sprintf("/api/utxo/%s/%d", hex.EncodeToString(in.TxID[:]), in.Index)
	ok, err = a.get(ctx, path, &out)
	return out, ok, err
}

// inMempool is GET /api/mempool/{hash}: whether the tx with this hash (of
// the whole tx) is in the node's mempool.
func (a nodeAPI) inMempool(ctx context.Context, hash [32]byte) (bool, error) {
	var answer struct {
		Ticket uint64 `json:"ticket"`
	}
	return a.get(ctx, "/api/mempool/"+hex.EncodeToString(hash[:]), &answer)
}

// get GETs path and decodes a 200 answer into v: found on 200, not found on
// 404, an error on anything else.
func (a nodeAPI) get(ctx context.Context, path string, v any) (found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return false, err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			return false, fmt.Errorf("GET %s: %w", path, err)
		}
		return true, nil
	case http.StatusNotFound:
		// The API answers "not there" in JSON; a bare 404 is a node
		// without the route, which must not read as "not there".
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
			return false, nil
		}
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<12))
	return false, fmt.Errorf("GET %s: %s: %s", path, resp.Status, apiErrorMessage(body))
}
