package notify

import (
	"errors"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// Rule failures. The violations wrap protocol.ErrViolation: from a peer,
// they end its stream and count against it.
var (
	// ErrInvalidHeader wraps the validator's reason for refusing a header.
	ErrInvalidHeader = protocol.NewViolation("notify: invalid announced header")
	// ErrFutureSlot: the header's slot starts beyond the allowed clock skew.
	ErrFutureSlot = protocol.NewViolation("notify: announced header from the future")
	// ErrEquivocation: a third header for one (slot, issuer). The relay
	// relays two, the second proving the equivocation, and refuses any
	// other. Our refusing a peer's header so is not its fault: an honest
	// relay sends the first two it saw, which need not be ours.
	ErrEquivocation = protocol.NewViolation("notify: third header for one (slot, issuer)")
	// ErrThirdHeader: the peer itself sent a third distinct header for one
	// (slot, issuer) on its stream, which no honest relay does; it is
	// disconnected at once.
	ErrThirdHeader = protocol.NewDisconnectViolation("notify: the peer sent a third header for one (slot, issuer)")
	// ErrInvalidVote wraps Options.ValidateVotes's reason: a seat that does
	// not exist or a signature that does not verify. A relay validates what
	// it relays, so no honest peer sends one: the peer is disconnected.
	ErrInvalidVote = protocol.NewDisconnectViolation("notify: invalid vote")
	// ErrRepeatedVote: the peer sent one (RB, seat)'s vote twice on its
	// stream. Its relay sends each vote once; a replay costs the node the
	// decoding and the lookups of every copy, so it is the sender's fault.
	ErrRepeatedVote = protocol.NewViolation("notify: the peer sent a vote twice")
	// ErrUnknownRB: a vote for an RB whose header was not accepted here. A
	// peer's relay sends an RB's header before its votes.
	ErrUnknownRB = protocol.NewViolation("notify: vote for an RB never announced")
	// ErrUnannouncedOffer: an offer of a point the peer did not announce on
	// this stream first. Its relay must never do that (the ordering
	// guarantee), so it is not a race but a broken or lying peer.
	ErrUnannouncedOffer = protocol.NewViolation("notify: offer of a point the peer did not announce")
)

// ErrImmutableSlot: the header is below the immutable tip. Not a violation:
// a peer behind us may still send it. It is not relayed.
var ErrImmutableSlot = errors.New("notify: announced header is below the immutable tip")

// ErrSlowPeer ends the stream of a peer whose FIFO reached
// Options.MaxQueue. Not a violation: a slow link is not misbehaviour; the
// peer reconnects and catches up.
var ErrSlowPeer = errors.New("notify: peer does not drain its notifications")

// ErrQuiet ends a client that heard nothing from its server for
// Options.KeepAlive: the host opens a new stream. Not a violation: a quiet
// network has no news.
var ErrQuiet = errors.New("notify: nothing from the peer for a while; reopening")
