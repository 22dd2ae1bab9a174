package block

// HashedTx is a tx's bytes with their Blake2b-256 hash, the hash EB bodies
// name it by. The hash is computed once, where the bytes enter the node (a
// fetched reply checked against the body that names it, an admitted
// mempool tx, a published closure), and travels with them, so no later
// stage hashes them again. Hash is always HashBytes(Bytes): build one with
// HashTx, or from a value that hashed the same bytes already.
type HashedTx struct {
	Hash  Hash
	Bytes []byte
}

// HashTx hashes tx.
func HashTx(tx []byte) HashedTx { return HashedTx{Hash: HashBytes(tx), Bytes: tx} }

// HashTxs hashes each of txs.
func HashTxs(txs [][]byte) []HashedTx {
	out := make([]HashedTx, len(txs))
	for i, tx := range txs {
		out[i] = HashTx(tx)
	}
	return out
}
