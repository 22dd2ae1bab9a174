// Package peersharing is the peer-sharing mini-protocol, after Cardano's
// PeerSharing: a client asks a peer for the addresses of up to amount
// others (MsgShareRequest), the server answers with at most that many of
// the peers it is connected to and willing to share (MsgSharePeers), and
// the client says done (MsgDone). Each shared peer is its peer ID and the
// multiaddrs it may be dialed at.
//
// Which peers a server shares is the host's business (network.Peer's
// PeersToShare): connected peers that take part in peer sharing
// themselves, at addresses the asking peer can reach. This package only
// carries the exchange and checks it: a server sharing more peers than
// asked for, or an address that does not parse, is a violation.
//
// The host's connection manager is the only client: it asks through
// Service.RequestPeers when it has fewer peers than its target. A node that
// does not take part in peer sharing does not run this service, so it
// neither asks nor answers, and since identify then does not list the
// protocol for it, no peer shares it with others.
//
// This package must never dial, keep a list of peers or decide which peers
// to share: the host does.
package peersharing
