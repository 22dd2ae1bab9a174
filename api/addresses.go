package api

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/ledger"
)

// handleAddressUTxOs is GET /api/addresses/{address}/utxos?count=N&page=P:
// the outputs unspent at the selected tip paid to the address (bech32 or
// hex), as Blockfrost's endpoint of that name lists them: count per page
// (default and most apitypes.MaxUTxOsPerPage), page from 1, in the order of (tx
// hash, output index). An address holding nothing is an empty list, not
// a 404: the index cannot tell it from one never used.
func (s *Server) handleAddressUTxOs(w http.ResponseWriter, r *http.Request) {
	address, err := ledger.ParseAddress(r.PathValue("address"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if n, want := ledger.AddressNetwork(address), s.opts.Params.NetworkID; n != want {
		writeError(w, http.StatusBadRequest, fmt.Errorf("address on network %d, this node's network is %d", n, want))
		return
	}
	count, err := positiveQuery(r, "count", apitypes.MaxUTxOsPerPage)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	page, err := positiveQuery(r, "page", 1)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	count = min(count, apitypes.MaxUTxOsPerPage)
	skip := (page - 1) * count
	bech := ledger.FormatAddress(address)
	out := []apitypes.AddressUTxO{}
	view, _ := s.opts.Chain.TipLedger()
	defer view.Close()
	err = view.AddressUTxOs(address, func(u chaindb.AddressUTxO) bool {
		if skip > 0 {
			skip--
			return true
		}
		out = append(out, apitypes.AddressUTxO{
			Address:     bech,
			TxHash:      hex.EncodeToString(u.In.TxID[:]),
			OutputIndex: u.In.Index,
			Amount:      []apitypes.Amount{{Unit: "lovelace", Quantity: strconv.FormatUint(u.Coin, 10)}},
		})
		return uint64(len(out)) < count
	})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// positiveQuery reads the query parameter name as a number ≥ 1, or def
// when it is absent.
func positiveQuery(r *http.Request, name string, def uint64) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n == 0 {
		return 0, errors.New(name + " must be a number ≥ 1")
	}
	return n, nil
}
