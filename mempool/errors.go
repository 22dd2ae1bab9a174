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
// tx (rather than no room, no turn, or a local failure).
func IsRejection(err error) bool { return ruleOf(err) >= 0 }

// ruleErrors are the ledger's rule failures. Only an error wrapping one of
// these rejects a tx; any other error (a ledger read failing) says nothing
// about the tx.
var ruleErrors = [...]error{
	ledger.ErrTxTooLarge,
	ledger.ErrInputsEmpty,
	ledger.ErrDuplicateInput,
	ledger.ErrExpired,
	ledger.ErrNotYetValid,
	ledger.ErrWrongNetwork,
	ledger.ErrOutputTooSmall,
	ledger.ErrFeeTooSmall,
	ledger.ErrInputNotInUTxO,
	ledger.ErrValueNotConserved,
	ledger.ErrBadWitness,
	ledger.ErrMissingWitness,
}

// ruleOf returns the index in ruleErrors of the rule err reports, or -1 if
// err is not a rule failure.
func ruleOf(err error) int {
	for i, rule := range ruleErrors {
		if errors.Is(err, rule) {
			return i
		}
	}
	return -1
}
