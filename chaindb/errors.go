package chaindb

import "errors"

// Sentinel errors. Returned errors wrap them with the block or point concerned.
var (
	// ErrInvalidBlock: the block, or an ancestor of it, failed validation.
	ErrInvalidBlock = errors.New("chaindb: invalid block")
	// ErrUnknownPredecessor: the block's predecessor is not stored.
	ErrUnknownPredecessor = errors.New("chaindb: unknown predecessor")
	// ErrForkTooDeep: the block forks off the selected chain more than K
	// blocks behind its tip (before the immutable tip).
	ErrForkTooDeep = errors.New("chaindb: fork deeper than k")
	// ErrNotFound: no such block or point (on the selected chain, where that
	// is what was asked).
	ErrNotFound = errors.New("chaindb: not found")
	// ErrClosed: the database, follower or view has been closed.
	ErrClosed = errors.New("chaindb: closed")

	// ErrNotReady is for Options.ApplyBlock to wrap when a block cannot be
	// judged yet: a CertRB whose certified EB closure is not complete in the
	// LeiosDB. Such a block is parked: stored, not selected, not held
	// invalid. Call Reselect when the missing data has arrived.
	ErrNotReady = errors.New("chaindb: block not ready")
)
