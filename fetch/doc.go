// Package fetch is LeiosFetch: the mini-protocol by which a node fetches
// endorser-block (EB) bodies and the txs of their closures from peers that
// offered them, and the decision logic that chooses what to request from
// whom. What it fetches it hands, checked, to Options.Ingest: the Leios
// pipeline (package leios), which stores it and tells the decision logic
// what is now held (events.go).
//
// # Protocol /leios/fetch/1
//
//	0 block request       [0, point]
//	1 block               [1, eb_body]                 as hashed: the network's EB body
//	2 block txs request   [2, point, bitmaps]
//	3 block txs           [3, point, bitmaps, [* bytes tx]]
//	9 done                [9]
//
// Bitmaps are a map { uint16 window => uint64 mask }, windows strictly
// ascending, no zero mask; tx offset = 64·window + bit position from the
// MSB; txs come back in that order as byte strings. Decoding is as strict as
// the Haskell prototype's codec: the bitmaps map is indefinite-length, the
// one form it writes and reads (the spec sets IndefiniteLengths); every
// other item, the message array included, is definite-length; no item is
// tagged (ForbidTags: a tx in tag 24 is refused, not unwrapped); every
// integer, length and count is in its shortest form (MinimalEncoding); a
// point is never the origin. Each refusal is a protocol violation that
// closes the stream (protocol.ErrIndefiniteLength, ErrTagged, ErrWrongType,
// ErrNonMinimal, or ErrMalformed). /leios/fetch/2 decodes as strictly.
// The client pipelines up to MaxPipelined requests. A
// server asked for what it does not hold ends the session with ErrNotHeld
// (logged, not a violation): the protocol has no "not found" message, and
// the client re-plans elsewhere. The client checks every body (size, hash,
// DecodeEBBody) and every tx hash against its request; a mismatch is a
// violation (ErrBadBody, ErrBadTxs).
//
// # Protocol /leios/fetch/2
//
// CIP-0164's LeiosFetch, served beside /leios/fetch/1 and spoken to the
// peers that serve it (Service, network.Peer.Speaks):
//
//	0 multi-block request [0, [+ eb_hash]]                ≤ MaxBlocksPerRequest, distinct
//	1 block               [1, eb_body, [* bytes tx]]       one per EB asked for, in order
//	2 no more blocks      [2]
//	3 block txs request   [3, eb_hash, bytes tx_bitmap]    empty bitmap: the body
//	4 block txs           [4, [* bytes tx]]                or [bytes eb_body]
//	5 done                [5]
//
// The tx bitmap is the CIP's byte string of 9-octet chunks (TxBitmap):
// chunk index, then the 64-bit mask, bits from the MSB as Bitmaps'. No
// item is indefinite or tagged. A multi-block answer's EBs are checked
// like bodies, and their txs against what each body names (ErrBadBody,
// ErrBadTxs); the decision logic sends certified EBs it wants whole by
// it, which is how a syncing node takes the closures its chain certifies.
//
// # Decision logic
//
// A plain state machine (decision.go) keyed by point: bodies wanted, and
// for each held body the txs its closure misses, seeded from the tx
// cache's answer to InsertBody. A tx is filed once whatever number of EBs
// miss it, so its arrival discharges it from all of them. Bodies are
// requested only from peers that offered them, txs only from peers that
// offered that EB's closure, and every txs request names the real point of
// an EB holding each tx it asks for. Freshest slot first when caught up,
// oldest first while syncing. Budgets (Options): in flight ≤ 50 MB total,
// ≤ 5 MB and ≤ MaxPipelined+1 requests per peer, ≤ 500 kB per txs request,
// ≤ 2 peers per body or tx (the second only after HedgeAfter). The loop
// plans when something changed — an announcement, an offer, an arrival, a
// request's end, a prune, a peer up or down — coalesced through one wake
// channel, and when a hedge falls due; never on a fixed tick.
//
// The fetch logic is driven by explicit steps (driver.go): PeerUp and
// PeerDown, Plan, Deliver and Abandon. Run and the per-peer clients drive
// them over real sessions; a scripted test drives them one at a time,
// playing the peers.
//
// The host runs it through Service (service.go). A client's stream lives
// while it has something to ask: after Options.KeepAlive with nothing
// asked it says done, and the next request opens a new stream; the peer
// stays up, its offers and budget kept.
//
// # Invariants
//
//   - A point whose body is held (or can never be, being invalid) is never
//     requested again until it is pruned; the decision logic's missing
//     txs of a point are exactly the LeiosDB's (CheckConsistency).
//   - A peer that goes away releases its budget; its requests are re-planned.
//   - The server holds, per session, one answer's EB body and one 128 KiB
//     chunk of its txs, never a closure (reply.go): answers are written as
//     they are read, within room held of the host's bound on what its
//     servers hold, taken before the body is read and released once the
//     answer is written.
//
// # Never
//
// It never writes the LeiosDB or the tx cache (only Ingest does), never
// holds its state lock across I/O or while calling Ingest, never trusts a
// reply it has not checked against its request, and never imports notify,
// the pipeline or the node: the pipeline wires notify's offers to it.
package fetch
