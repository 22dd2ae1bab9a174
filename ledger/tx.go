package ledger

// Tx is a decoded transaction. It keeps the bytes it was decoded from, and
// ID and Hash are digests of those bytes, never of a re-encoding.
//
// A Tx is immutable once decoded (its fields must not be modified), so it
// may be shared between goroutines, e.g. inside mempool snapshots.
type Tx struct {
	Inputs  []TxIn
	Outputs []TxOut
	Fee     uint64
	// TTL is the first slot at which the tx is no longer valid (Cardano's
	// invalid_hereafter, body key 3): valid while slot < TTL. Nil: no bound.
	TTL *uint64
	// ValidityStart is the first slot at which the tx is valid (Cardano's
	// invalid_before, body key 8). Nil: no bound.
	ValidityStart *uint64
	Witnesses     []VKeyWitness

	raw         []byte // the whole tx as it came off the wire
	body        []byte // a sub-slice of raw: the body as it came off the wire
	auxData     []byte // a sub-slice of raw: the auxiliary data as it came off the wire; nil for null
	outputSizes []int  // the encoded size of each output, as it appears in raw
	id, hash    [32]byte
}

// VKeyWitness is an ed25519 verification key and its signature over a tx id.
type VKeyWitness struct {
	VKey      [32]byte
	Signature [64]byte
}

// ID is the tx id: Blake2b-256 of the body bytes. Outputs of this tx are
// spent as TxIn{ID, index}.
func (tx *Tx) ID() [32]byte { return tx.id }

// Hash is Blake2b-256 of the whole serialized tx: the hash EB bodies, the
// LeiosDB and the tx cache name it by.
func (tx *Tx) Hash() [32]byte { return tx.hash }

// Size is the length of the serialized tx in bytes.
func (tx *Tx) Size() int { return len(tx.raw) }

// Bytes is the serialized tx as decoded. Callers must not modify it.
func (tx *Tx) Bytes() []byte { return tx.raw }

// BodyBytes is the serialized body as decoded. Callers must not modify it.
func (tx *Tx) BodyBytes() []byte { return tx.body }

// AuxData is the tx's auxiliary data (its metadata) as decoded, whose hash
// the body's key 7 carries; nil when the tx has none. Callers must not
// modify it.
func (tx *Tx) AuxData() []byte { return tx.auxData }

// OutputSize is the encoded size of output i as it appears in the tx: the
// size the output minimum is computed from.
func (tx *Tx) OutputSize(i int) int { return tx.outputSizes[i] }
