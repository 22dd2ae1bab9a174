// Package notify is LeiosNotify (/leios/notify/1) and CIP-0164's three
// streams that replace it (/leios/announce/1, /leios/votes/1,
// /leios/blocknotify/1): how a node tells its peers what it knows of Leios
// endorser blocks — the RB headers that announce them, offers of the EB
// bodies and closures it holds, and votes. One relay serves both sets.
//
// # Protocol
//
// The client keeps up to MaxInFlight "request next" in flight (engine
// pipelining); the server answers each with exactly one notification — a
// block announcement, a block offer, a block-txs offer or a vote batch —
// taken from that peer's FIFO, and holds a request as long as there is no
// news; a client that hears nothing for Options.KeepAlive opens a new
// stream rather than take a quiet server for a stuck one. Messages and
// encodings follow the Haskell leios-prototype codec (docs/protocol.md,
// "Mini-protocols"):
//
//	[0]                          request next        client
//	[1, header]                  block announcement  server (the RB header's original bytes)
//	[2, point, eb_size: word32]  block offer         server (the EB body is held)
//	[3, point]                   block txs offer     server (the whole closure is held)
//	[4, [* vote]]                votes               server (at least one)
//	[5]                          done                client
//
// Decoding is as strict as the Haskell codec's: every item definite-length
// (the message array included), no item tagged (the spec sets ForbidTags),
// a vote seat within 16 bits and an EB size within 32, a point never the
// origin, every integer, length and count in its shortest form (the spec
// sets MinimalEncoding; an announced header is its issuer's bytes, left to
// its own codec); each refusal is a protocol violation that closes the
// stream (protocol.ErrIndefiniteLength, ErrTagged, ErrWrongType,
// ErrNonMinimal, ErrMalformed). The CIP's streams decode as strictly.
//
// # Relay
//
// One Relay per node, shared by every peer, feeds one FIFO per served peer:
//   - Announcements (Announce): from the node's forge, from chain sync and
//     from every peer's client. A header is validated (ValidateHeader:
//     signature, VRF; its slot not below the immutable tip nor in the
//     future); at most two headers per (slot, issuer) are relayed, the
//     second proving equivocation; a third is refused with ErrEquivocation.
//     A header is relayed once, however many times it arrives.
//   - Offers (Offer): the node's LeiosDB follower passes each event on;
//     BodyStored becomes a block offer, ClosureComplete a block-txs offer,
//     each once per point.
//   - Votes (Votes): each (rb_hash, seat) is relayed once, for an accepted
//     header that announced an EB, checked (Options.ValidateVotes) on the
//     network's vote message for that announcement, whichever stream
//     brought the vote (block.VoteSubject).
//
// # Invariants
//
//   - No offer ever precedes its announcement on any peer's stream. Every
//     FIFO is appended to under one lock, an announcement is appended to
//     every FIFO when it is accepted, and an offer for a point is appended
//     only once a header announcing that point has been accepted: offers for
//     points this relay has not seen announced are held until it is (or the
//     point is pruned). A newly served peer gets, in slot order, every
//     recent announcement followed by the offers of its point, then the
//     recent votes.
//   - A block offer for a point precedes its block-txs offer (LeiosDB sends
//     BodyStored before ClosureComplete; catch-up keeps that order).
//   - Memory is bounded: state below the pruned slot (Prune) is dropped and
//     refused; a FIFO that reaches Options.MaxQueue is dropped with its
//     session (ErrSlowPeer, not a violation) — the peer reconnects and
//     catches up from the relay's bounded state, so dropping is the
//     compaction.
//
// On the client side a received announcement goes through Announce before
// the node is told (Options.OnAnnouncement, for headers new to this
// relay). A third distinct header for one (slot, issuer) on one stream is
// the peer's violation (ErrThirdHeader), and the peer is disconnected at
// once; a header the relay
// refuses only because it took two others is not (the peer's first two
// need not be ours), and its offers are ignored. An offer for a point the
// peer never announced on this stream is a violation (ErrUnannouncedOffer):
// its relay guarantees the order. Announcements, offers and (on the CIP's
// streams) votes below the immutable tip are ignored: a peer behind us may
// still send them. Each costs the peer one of its budget of useless
// messages (Peer.Waste: the host's network.Peer.Waste), so a flood of
// them is a violation (network.ErrWasteful), not free work. One
// violation on a peer's CIP streams ends the three and counts once.
//
// # The CIP's streams
//
// Each carries one kind — announcements, votes, offers — as a request-N
// token stream (cip_spec.go): the client grants GrantSize at a time with
// GrantsAhead grants outstanding, and the server sends from a FIFO of its
// own kind while it holds tokens (cip_server.go). A vote travels as the
// CIP's [slot, eb_hash, voter_id, signature] and an offer as (slot,
// eb_hash, block_height); the relay keeps its one currency — RB hashes and
// points — and converts at the stream's edge. The streams are not ordered
// against each other, so the client (FollowCIP, cip_client.go) holds an
// offer or vote until its announcement has come, and hands what the three
// carry to one follower per peer: every rule above holds across them.
//
// The host runs it through Service (service.go), which serves the sets
// ServiceOptions.Protocols chooses and follows each peer over the CIP's
// streams if it serves them, else the prototype's.
//
// This package never reads or writes the LeiosDB, never imports fetch or
// the pipeline (the pipeline wires the callbacks), and never makes one
// peer's stream wait on another's: a full FIFO drops that peer, it never
// blocks the relay.
package notify
