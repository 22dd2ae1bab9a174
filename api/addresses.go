package api

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/ledger"
)

// MaxUTxOsPerPage bounds one page of GET /api/addresses/{address}/utxos,
// as Blockfrost's count does.
const MaxUTxOsPerPage = 100

// AddressUTxO is one output of GET /api/addresses/{address}/utxos, in
// Blockfrost's shape (its fields of the same name; the ones about datums,
// scripts and the block are left out: this ledger has none of the former
// and its index does not keep the latter).
type AddressUTxO struct {
	Address     string   `json:"address"` // bech32
	TxHash      string   `json:"tx_hash"` // the id of the tx that made it (hex)
	OutputIndex uint32   `json:"output_index"`
	Amount      []Amount `json:"amount"`
}

// Amount is a quantity of one unit; here always lovelace.
type Amount struct {
	Unit     string `json:"unit"`     // "lovelace"
	Quantity string `json:"quantity"` // decimal, as Blockfrost writes it
}

// Lovelace is the amount's quantity of lovelace; an error for another unit
// or a quantity that is not a number.
func (u AddressUTxO) Lovelace() (uint64, error) {
	if len(u.Amount) != 1 || u.Amount[0].Unit != "lovelace" {
		return 0, fmt.Errorf("output %s#%d: amount %v is not lovelace alone", u.TxHash, u.OutputIndex, u.Amount)
	}
	return strconv.ParseUint(u.Amount[0].Quantity, 10, 64)
}

// TxIn is the input that spends the output.
func (u AddressUTxO) TxIn() (ledger.TxIn, error) {
	id, err := hex.DecodeString(u.TxHash)
	if err != nil || len(id) != 32 {
		return ledger.TxIn{}, fmt.Errorf("output %s#%d: tx hash is not 32 bytes of hex", u.TxHash, u.OutputIndex)
	}
	return ledger.TxIn{TxID: [32]byte(id), Index: u.OutputIndex}, nil
}

// handleAddressUTxOs is GET /api/addresses/{address}/utxos?count=N&page=P:
// the outputs unspent at the selected tip paid to the address (bech32 or
// hex), as Blockfrost's endpoint of that name lists them: count per page
// (default and most MaxUTxOsPerPage), page from 1, in the order of (tx
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
	count, err := positiveQuery(r, "count", MaxUTxOsPerPage)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	page, err := positiveQuery(r, "page", 1)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	count = min(count, MaxUTxOsPerPage)
	skip := (page - 1) * count
	bech := ledger.FormatAddress(address)
	out := []AddressUTxO{}
	view, _ := s.opts.Chain.TipLedger()
	defer view.Close()
	err = view.AddressUTxOs(address, func(u chaindb.AddressUTxO) bool {
		if skip > 0 {
			skip--
			return true
		}
		out = append(out, AddressUTxO{
			Address:     bech,
			TxHash:      hex.EncodeToString(u.In.TxID[:]),
			OutputIndex: u.In.Index,
			Amount:      []Amount{{Unit: "lovelace", Quantity: strconv.FormatUint(u.Coin, 10)}},
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
