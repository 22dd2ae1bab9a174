package ledger

import (
	"encoding/hex"
	"fmt"
)

// GenesisTxIn is the input at which a genesis address's initial funds sit:
// (Blake2b-256 of the address encoded as a CBOR byte string, 0).
func GenesisTxIn(address []byte) TxIn {
	return TxIn{TxID: hash256(mustEncode(address)), Index: 0}
}

// GenesisUTxO builds the initial UTxO from the genesis file's initialFunds
// (address hex → lovelace). Each address must be one an output may carry.
func GenesisUTxO(initialFunds map[string]uint64) (MapUTxO, error) {
	utxo := make(MapUTxO, len(initialFunds))
	for addrHex, coin := range initialFunds {
		addr, err := hex.DecodeString(addrHex)
		if err != nil {
			return nil, fmt.Errorf("ledger: genesis address %q: %w", addrHex, err)
		}
		if err := CheckAddress(addr); err != nil {
			return nil, fmt.Errorf("ledger: genesis address %s: %w", addrHex, err)
		}
		in := GenesisTxIn(addr)
		if _, dup := utxo[in]; dup {
			// Two spellings (letter case) of one address.
			return nil, fmt.Errorf("ledger: genesis address %s listed twice", addrHex)
		}
		utxo[in] = TxOut{Address: addr, Coin: coin}
	}
	return utxo, nil
}
