package mempool

import (
	"errors"

	"github.com/leiosnode/leiosnode/ledger"
)

var (
	// ErrFull: the mempool had no room for the tx before the caller's
	// context ended (a local submit's timeout), or the tx is larger than
	// the whole capacity.
	ErrFull = errors.New("mempool full")
	// ErrDuplicate: the mempool already holds the tx.
	ErrDuplicate = errors.New("mempool: tx already in the mempool")
	// ErrBusy: the caller's context ended while the add waited for its turn
	// (adds are served in arrival order, behind a sync's commit): nothing
	// is known about the tx.
	ErrBusy = errors.New("mempool busy")
)

// IsRejection reports whether err, from Add, is a ledger rule refusing the
// tx (rather than no room, no turn, or a local failure). Only an error
// wrapping one of the ledger's rules rejects a tx; any other error (a ledger
// read failing) says nothing about the tx.
func IsRejection(err error) bool {
	_, ok := ledger.RuleOf(err)
	return ok
}
