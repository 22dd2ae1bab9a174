// Package hostile is the devnet's hostile peers and clients, the attacks
// the node is hardened against, run from outside as an attacker would: a
// libp2p peer of fresh identities that floods the CIP's notification
// streams with junk, breaks their rules, asks for EB data the node does
// not hold, or asks for full closures and blocks and never reads them;
// and an HTTP client on raw connections that asks for large answers and
// never reads them, or uploads its bodies a few bytes a second from many
// addresses.
//
// It owns the attacks (Run, one Attack each) and the account of what each
// did (Tally). The node's answer — its counters, heap and RSS — is read
// from its /metrics by the chaos mode (package chaos), never here.
//
// Invariants:
//   - An attack runs until its context ends and then lets go of everything
//     it holds: every host closed, every connection closed, every goroutine
//     returned before Run does.
//   - The peer speaks the node's wire through the node's own message types
//     and encodings (notify, fetch, network/blockfetch, network/protocol),
//     never bytes written by hand, so an attack is refused for what it
//     means, not for a codec slip. The one message sent out of turn
//     (CIPViolation's) is the node's own encoding, written past the
//     session that would refuse to send it.
//   - Each identity is fresh (a new ed25519 key); one the node banned or
//     cut off is replaced by another.
//
// This package must never reach into a node's process or files: it only
// connects, as any remote peer or client may.
package hostile
