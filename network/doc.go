// Package network is the host of the node's mini-protocols: a libp2p host
// (TCP, Noise, Yamux) whose peer ID is the node's ed25519 key, a static
// topology it keeps dialing, a connection manager that finds more peers by
// peer sharing, the Services it runs with every connected peer, and the
// scoring of peers.
//
// What it owns:
//   - Peers: the topology is redialed with backoff; with peer sharing, the
//     connection manager (connmgr.go) keeps TargetPeers, dialing peers
//     others shared (share.go says what this host shares); every Service's
//     client runs toward every connected peer, whoever dialed, and is
//     restarted with backoff while the peer stays connected. Every
//     connection, disconnection (with its reason) and failed dial is
//     logged with the address.
//   - Listening: each listen address is bound by NewHost, alone, without
//     SO_REUSEPORT: an address in use is an error, never a shared port.
//   - Streams: one libp2p protocol ID per mini-protocol and version,
//     /leios/<name>/<version>. A client opens one long-lived stream per
//     protocol (Peer.Open), in the first version the peer's identify lists
//     (Peer.Speaks), so two peers run each protocol both ways; the host
//     answers the streams peers open with the Service's Server for that
//     protocol.
//   - The engine: every stream is a protocol.Session, which enforces the
//     mini-protocol's state machine (sub-package protocol).
//   - Peer scoring: every violation closes its stream, is logged with the
//     peer ID and counted; a peer with MaxViolations within ViolationWindow
//     is disconnected and gated (refused both ways) for BanDuration.
//   - Limits: connections in total and per peer, inbound streams per peer
//     (libp2p's resource manager), streams per protocol per peer (a peer
//     opening more than it needs is disconnected), and inbound peers
//     outside the topology (the gater); each refusal is counted by limit.
//
// Protocol packages plug in through the Service interface, each in its own
// service.go (network/chainsync, network/blockfetch, network/txsubmission,
// network/peersharing, notify, fetch); peer sharing also through the
// PeerSharing interface, which the connection manager asks. Each builds
// its Service the same way, NewService(ServiceOptions) (*Service, error):
// the options hold the parts it requires (one missing is an error naming
// it) and Timeouts, per-state overrides of its Spec (nil keeps the Spec's).
// The host knows no chain types: it never imports block, ledger, a store
// or a protocol package, and what a protocol does with the chain, the
// mempool or the LeiosDB is its own options' business.
//
// Invariants: one misbehaving stream or peer never stops another; every
// goroutine (dialers, per-peer clients, stream handlers, session readers)
// ends when Run's context does, before Run returns.
//
// What it must never do: touch storage or chain state, or make one peer's
// protocol loop wait on another peer.
package network
