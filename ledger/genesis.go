package ledger

import "fmt"

// GenesisTxIn is the input at which a genesis address's initial funds sit:
// (Blake2b-256 of the address encoded as a CBOR byte string, 0).
func GenesisTxIn(address []byte) TxIn {
	return TxIn{TxID: hash256(mustEncode(address)), Index: 0}
}

// GenesisUTxO builds the initial UTxO from the genesis file's initialFunds
// (address → lovelace; the address in hex, as Cardano's genesis files
// spell it, or bech32). Each address must be one an output may carry.
func GenesisUTxO(initialFunds map[string]uint64) (MapUTxO, error) {
	utxo := make(MapUTxO, len(initialFunds))
	for text, coin := range initialFunds {
		addr, err := ParseAddress(text)
		if err != nil {
			return nil, fmt.Errorf("ledger: genesis: %w", err)
		}
		in := GenesisTxIn(addr)
		if _, dup := utxo[in]; dup {
			// Two spellings (letter case, hex and bech32) of one address.
			return nil, fmt.Errorf("ledger: genesis address %s listed twice", text)
		}
		utxo[in] = TxOut{Address: addr, Coin: coin}
	}
	return utxo, nil
}
