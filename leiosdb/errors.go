package leiosdb

import "errors"

// Rule failures of received data: the caller may hold the sending peer
// responsible. Body decoding failures wrap block.ErrInvalidEB as well.
var (
	// ErrHashMismatch: a body does not hash to its point's EB hash.
	ErrHashMismatch = errors.New("leiosdb: EB body hash differs from the point's hash")
	// ErrSizeMismatch: a body's length differs from the announced EB size, or
	// an announcement's size differs from the length of the body already held.
	ErrSizeMismatch = errors.New("leiosdb: EB size differs from the announced size")
	// ErrTxSizeMismatch: a body declares a size for a tx that differs from the
	// length of that tx, already stored.
	ErrTxSizeMismatch = errors.New("leiosdb: EB body declares a wrong tx size")
)

// Caller errors and states.
var (
	// ErrUnknownPoint: the point was never announced (InsertPoint) or was
	// garbage collected.
	ErrUnknownPoint = errors.New("leiosdb: unknown point")
	// ErrConflictingPoint: the point is known with another EB size.
	ErrConflictingPoint = errors.New("leiosdb: point already known with another EB size")
	// ErrNoBody: the EB body is not held.
	ErrNoBody = errors.New("leiosdb: EB body not held")
	// ErrTxMissing: a tx of a held body is not stored (yet).
	ErrTxMissing = errors.New("leiosdb: tx not stored")
	// ErrOffset: a tx offset outside the EB body.
	ErrOffset = errors.New("leiosdb: tx offset out of range")
	// ErrClosed: the DB was closed.
	ErrClosed = errors.New("leiosdb: closed")
)

// ErrCorrupt is wrapped by every failure of a stored record to decode or of
// CheckConsistency: the store broke one of its invariants.
var ErrCorrupt = errors.New("leiosdb: inconsistent store")
