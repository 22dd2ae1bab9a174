// Package protocol is the mini-protocol engine: one implementation of
// framing, agency, size limits and timeouts shared by every mini-protocol of
// the node (chainsync, blockfetch, txsubmission, peersharing, notify,
// fetch).
//
// A mini-protocol is declared, not coded: a Spec lists its states, and for
// each state who has agency, which messages may be sent in it and the state
// each one leads to, the largest message accepted and how long the side
// without agency waits. A Session runs one Spec over one stream and enforces
// it in both directions; the protocol's client and server only call Send and
// Recv.
//
// Wire format: each message is a uvarint length followed by exactly one CBOR
// item, the definite-length array `[tag, payload...]`. The length is checked
// against the limit of the state before any of the body is read. Items are
// definite-length unless the Spec allows indefinite ones
// (IndefiniteLengths), and tagged unless it forbids tags (ForbidTags); a
// message refused for either, or for an item of the wrong type, is
// ErrIndefiniteLength, ErrTagged or ErrWrongType, each an ErrMalformed.
//
// Invariants:
//   - A Session's state is the sequential interpretation of the exchange:
//     every message, sent or received, is applied in the order the protocol
//     defines. A message that arrives while the receiver holds agency is a
//     violation, unless the Spec allows pipelining, in which case up to
//     MaxPipelined such messages wait and are applied when agency returns.
//     Messages already received behind the one that hands the receiver
//     agency were sent before the peer could see its answer, and are judged
//     then: sending without agency is a violation every time, not only when
//     the receiver's answer is slower than its reader.
//   - No wait is endless: every state with agency declares a timeout
//     (Validate refuses a Spec without), and a frame, from its first byte,
//     must arrive within Config.FrameTimeout plus its length at
//     Config.FrameRate, whatever the state; a frame we send must be taken
//     by the peer within the same allowance (ErrSlowReader), so a peer that
//     asks and never reads cannot hold a sender, or what it holds, for
//     longer. The time a frame waits for the host's budget (Config.Pace)
//     is the host's, and does not count against it.
//   - What a session holds of a message it sends is bounded by the message
//     for Send (its encoding), and by the piece being written for
//     SendStreamed (a message produced as it is written, its length known
//     up front): a 12 MB closure need not be held whole to be sent. A
//     server holds the bytes it reads for an answer through Session.Hold,
//     within the host's bound, from before it reads them until they are
//     written.
//   - Every violation by the peer (ErrAgency, ErrUnexpectedMessage,
//     ErrMessageTooLarge, ErrMalformed, ErrTimeout, ErrSlowReader, or a protocol's own error
//     wrapping ErrViolation) ends the session, resets its stream and is
//     reported once through Config.OnViolation. It never panics and never
//     touches any other session. A session ended by its context is not the
//     peer's offence, whatever violation the context's cause names
//     (ClosedBy): a peer's sibling sessions cancelled together count once.
//   - A Session owns one goroutine, its reader; Close waits for it.
//
// This package must never know about peers, scoring, storage or any
// particular protocol: it sees one stream and one Spec.
package protocol
