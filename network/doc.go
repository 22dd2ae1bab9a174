// Package network is the node's networking: a libp2p host (TCP, Noise,
// Yamux) whose peer ID is the node's ed25519 key, a static topology it keeps
// dialing, the mini-protocols it runs with every connected peer (chain sync
// and block fetch here; more through Services), and the scoring of peers.
//
// What it owns:
//   - Streams: one libp2p protocol ID per mini-protocol, /leios/<name>/1. For
//     every connected peer, whoever dialed, the node opens one long-lived
//     stream per client protocol (so two peers sync from each other), and it
//     serves the streams peers open to it.
//   - Framing and agency: every stream is a protocol.Session, which enforces
//     the mini-protocol's state machine (sub-package protocol).
//   - Peer scoring: every violation closes its stream, is logged with the
//     peer ID and counted; a peer with MaxViolations within ViolationWindow
//     is disconnected and gated (refused both ways) for BanDuration.
//
// Invariants: one misbehaving stream or peer never stops another; every
// goroutine (dialers, per-peer clients, stream handlers, session readers)
// ends when Run's context does, before Run returns.
//
// What it must never do: touch storage except through the Chain interface
// (and a Service's own callbacks), or make one peer's protocol loop wait on
// another peer.
package network
