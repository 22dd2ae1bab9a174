package apitypes

// MaxBlocksPerRequest bounds GET /api/blocks.
const MaxBlocksPerRequest = 1000

// BlockTxs is one block of the selected chain with the txs it put on the
// ledger, for tools that walk the chain (the devnet's final check): the
// hashes (of the whole tx) of its own txs, and for a CertRB the certified
// EB and the hashes of its closure, in the order they were applied.
type BlockTxs struct {
	Number uint64   `json:"number"`
	Slot   uint64   `json:"slot"`
	Hash   string   `json:"hash"`
	Txs    []string `json:"txs"`
	// Announces is the EB this block announces, if any.
	Announces *EBRef `json:"announces,omitempty"`
	// Certifies is the EB this block certifies, if it is a CertRB, and
	// Closure its txs.
	Certifies *EBRef   `json:"certifies,omitempty"`
	Closure   []string `json:"closure,omitempty"`
}

// EBRef names an EB by its point.
type EBRef struct {
	Slot   uint64 `json:"slot"`
	EbHash string `json:"ebHash"`
}
