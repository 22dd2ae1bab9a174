package ledger

import "errors"

// Decoding errors. DecodeTx wraps exactly one of these.
var (
	// ErrMalformed: the bytes are not a well-formed transaction of the
	// supported shape (bad CBOR, wrong types, wrong lengths, missing keys).
	ErrMalformed = errors.New("ledger: malformed transaction")
	// ErrUnsupported: a well-formed Conway feature this ledger does not
	// implement (certificates, multi-assets, scripts, …); the wrapping error
	// names the feature.
	ErrUnsupported = errors.New("ledger: unsupported feature")
)

// Rule failures (ARCHITECTURE.md, "Wire formats"). Apply and Reapply wrap exactly one of these,
// with the detail (which input, which amounts).
var (
	ErrTxTooLarge        = errors.New("ledger: tx larger than max tx size")
	ErrInputsEmpty       = errors.New("ledger: tx has no inputs")
	ErrDuplicateInput    = errors.New("ledger: tx spends an input twice")
	ErrExpired           = errors.New("ledger: tx expired (slot ≥ ttl)")
	ErrNotYetValid       = errors.New("ledger: tx not yet valid (slot < validity start)")
	ErrWrongNetwork      = errors.New("ledger: output address on wrong network")
	ErrOutputTooSmall    = errors.New("ledger: output below minimum coin")
	ErrFeeTooSmall       = errors.New("ledger: fee below minimum")
	ErrInputNotInUTxO    = errors.New("ledger: input not in UTxO")
	ErrValueNotConserved = errors.New("ledger: inputs ≠ outputs + fee")
	ErrBadWitness        = errors.New("ledger: witness signature does not verify")
	ErrMissingWitness    = errors.New("ledger: input's payment key has no witness")
)
