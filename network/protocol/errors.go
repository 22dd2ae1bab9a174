package protocol

import (
	"errors"
	"fmt"
)

// ErrViolation is wrapped by every error that is the peer's fault. Such an
// error ends the session and counts against the peer.
var ErrViolation = errors.New("protocol violation")

// The engine's violations. Protocols define their own with NewViolation.
var (
	ErrAgency            = NewViolation("message sent without agency")
	ErrUnexpectedMessage = NewViolation("message not allowed in this state")
	ErrMessageTooLarge   = NewViolation("message exceeds the state's size limit")
	ErrMalformed         = NewViolation("malformed message")
	ErrTimeout           = NewViolation("peer did not answer in time")
	ErrSlowReader        = NewViolation("peer did not read what it asked for in time")
)

// The reasons a message is malformed that the CBOR decoder tells apart;
// each wraps ErrMalformed. Decode names them, so that a test (or a log)
// can see why a peer's message was refused.
var (
	// ErrIndefiniteLength: an indefinite-length array, map or string where
	// the codec wants a definite one (everywhere but where a Spec's
	// messages allow it, and never the message array itself).
	ErrIndefiniteLength = fmt.Errorf("%w: indefinite length where the codec wants a definite one", ErrMalformed)
	// ErrTagged: a CBOR tag in a message of a Spec that forbids tags (a tx
	// wrapped in tag 24, say).
	ErrTagged = fmt.Errorf("%w: CBOR tag where the codec allows none", ErrMalformed)
	// ErrWrongType: an item of the wrong CBOR type, or an integer beyond
	// its field's range (a vote seat beyond 16 bits, a size beyond 32).
	ErrWrongType = fmt.Errorf("%w: item of the wrong type or out of range", ErrMalformed)
	// ErrNonMinimal: an integer, length, count or tag number in more bytes
	// than it needs (`18 05` for 5, `98 02` for an array of two), in a
	// message of a Spec that wants minimal encodings (MinimalEncoding).
	ErrNonMinimal = fmt.Errorf("%w: integer or length not in its shortest form", ErrMalformed)
)

// ErrClosed ends a session that was closed, locally or by the peer, or whose
// context ended. It is not a violation.
var ErrClosed = errors.New("protocol: session closed")

// ClosedBy is the error of a session ended because its context ended with
// cause. It wraps ErrClosed and cause, unless cause is a violation: one
// found on another session that shares the context (a client's sibling
// streams toward one peer, cancelled together) was reported by that
// session; this one ends as its consequence, and is no second offence.
func ClosedBy(cause error) error {
	if IsViolation(cause) {
		return fmt.Errorf("%w: another session's %v", ErrClosed, cause)
	}
	return fmt.Errorf("%w: %w", ErrClosed, cause)
}

// NewViolation returns a sentinel error for a protocol-specific violation;
// it wraps ErrViolation.
func NewViolation(text string) error {
	return fmt.Errorf("%w: %s", ErrViolation, text)
}

// IsViolation reports whether err is the peer's fault.
func IsViolation(err error) bool { return errors.Is(err, ErrViolation) }

// ErrDisconnect marks the violations bad enough that the peer is
// disconnected (and banned) at once, without waiting for repeats: the
// protocol already counted the offence itself, like a peer that kept
// sending invalid txs.
var ErrDisconnect = errors.New("peer must be disconnected")

// NewDisconnectViolation is NewViolation for a violation that disconnects
// the peer at once.
func NewDisconnectViolation(text string) error {
	return fmt.Errorf("%w: %w: %s", ErrViolation, ErrDisconnect, text)
}
