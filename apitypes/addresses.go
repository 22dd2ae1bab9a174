package apitypes

import (
	"encoding/hex"
	"fmt"
	"strconv"
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

// TxID is the id of the tx that made the output (TxHash), as 32 bytes:
// with OutputIndex, the input that spends it.
func (u AddressUTxO) TxID() ([32]byte, error) {
	id, err := hex.DecodeString(u.TxHash)
	if err != nil || len(id) != 32 {
		return [32]byte{}, fmt.Errorf("output %s#%d: tx hash is not 32 bytes of hex", u.TxHash, u.OutputIndex)
	}
	return [32]byte(id), nil
}
