package txcache

// TxState is what the cache knows of a tx. The zero value, TxAbsent, is
// "not held": the cache cannot vouch for the tx, so it must be fetched.
type TxState uint8

const (
	// TxAbsent: no inserted body in the cache names the tx, or the table
	// could not hold it (a false miss, which is allowed).
	TxAbsent TxState = iota
	// TxNotYetInserted: an inserted body names the tx but it is not in the
	// LeiosDB yet: it must be fetched.
	TxNotYetInserted
	// TxInserted: the tx is in the LeiosDB.
	TxInserted
	// TxValidated: the tx is in the LeiosDB and its witnesses were
	// verified on this node (its mempool admitted it, the forge made it, or
	// a closure check applied it in full): applying it again need not
	// verify them.
	TxValidated
)

// Held reports whether the tx is in the LeiosDB, so need not be fetched.
func (s TxState) Held() bool { return s >= TxInserted }

func (s TxState) String() string {
	switch s {
	case TxAbsent:
		return "absent"
	case TxNotYetInserted:
		return "not-yet-inserted"
	case TxInserted:
		return "inserted"
	case TxValidated:
		return "validated"
	}
	return "invalid"
}

// BodyState is what the cache knows of an announced EB body.
type BodyState uint8

const (
	// BodyNotYetInserted: announced, body not inserted yet.
	BodyNotYetInserted BodyState = iota + 1
	// BodyInserted: announced and inserted; its txs are indexed.
	BodyInserted
)

func (s BodyState) String() string {
	switch s {
	case BodyNotYetInserted:
		return "not-yet-inserted"
	case BodyInserted:
		return "inserted"
	}
	return "invalid"
}

// MarkResult reports, per tx, what MarkInserted or MarkValidated did.
type MarkResult uint8

const (
	// MarkExtra: the cache does not hold the tx, so nothing changed. Either no
	// inserted body names it (unsolicited, or its EBs were evicted — the two
	// cannot be told apart without keeping history), or the table was full
	// when its bodies were inserted.
	MarkExtra MarkResult = iota
	// MarkWanted: an inserted body names the tx and its state advanced.
	MarkWanted
	// MarkAlready: an inserted body names the tx and it was already at or
	// past the requested state (a duplicate arrival); nothing changed.
	MarkAlready
)

func (r MarkResult) String() string {
	switch r {
	case MarkExtra:
		return "extra"
	case MarkWanted:
		return "wanted"
	case MarkAlready:
		return "already"
	}
	return "invalid"
}

// A slot's state word packs, from the least significant bit:
//
//	bits 0–1   TxState (0 = empty slot)
//	bits 2–23  reference count: inserted bodies that counted this tx
//	bits 24–31 the key's tag: 0x80 | 7 bits of its hash, never 0
//
// One word, so a reader loads a consistent (state, rc) pair atomically,
// and a small one, so that sixteen share a cache line (see table). The
// count's 22 bits hold far more than the bodies a cache holds.
const (
	kindBits = 2
	kindMask = 1<<kindBits - 1
	refShift = kindBits
	refBits  = 22
	maxRefs  = 1<<refBits - 1
	refOne   = 1 << refShift
	tagShift = refShift + refBits
	// maxSlots bounds TxCapacity (Options).
	maxSlots = 1 << 32
)

func packState(kind TxState, refs uint64, tag uint32) uint32 {
	return tag<<tagShift | uint32(refs)<<refShift | uint32(kind)
}

func stateKind(w uint32) TxState { return TxState(w & kindMask) }
func stateRefs(w uint32) uint64  { return uint64(w >> refShift & maxRefs) }
func stateTag(w uint32) uint32   { return w >> tagShift }
