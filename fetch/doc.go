// Package fetch is LeiosFetch (DESIGN §3): the mini-protocol by which a
// node fetches endorser-block (EB) bodies and the txs of their closures
// from peers that offered them, the decision logic that chooses what to
// request from whom, and the ingest handlers through which every EB datum
// — from peers and from the local forge alike — enters the node.
//
// # Protocol /leios/fetch/1
//
//	0 block request       [0, point]
//	1 block               [1, eb_body]                 the bare map, as hashed
//	2 block txs request   [2, point, bitmaps]
//	3 block txs           [3, point, bitmaps, [* bytes tx]]
//	9 done                [9]
//
// Bitmaps are a map { uint16 window => uint64 mask }, windows strictly
// ascending, no zero mask; tx offset = 64·window + bit position from the
// MSB; txs come back in that order as byte strings. The map is sent
// indefinite-length, as DESIGN and the Haskell prototype's codec have it
// (the spec sets IndefiniteLengths), and decoded in either form. The client
// pipelines up to
// MaxPipelined requests. A server asked for what it does not hold ends the
// session with ErrNotHeld (logged, not a violation): the protocol has no
// "not found" message, and the client re-plans elsewhere. The client checks
// every body (size, hash, DecodeEBBody) and every tx hash against its
// request; a mismatch is a violation (ErrBadBody, ErrBadTxs).
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
// The host runs it through Service (service.go).
//
// # Invariants
//
//   - Ordering contract (the hit-prune hazard): the LeiosDB is written
//     before the tx cache, announcement before body before txs, and Prune
//     evicts the cache before the LeiosDB GC. ingestMu serializes the
//     handlers, so the cache has one writer at a time.
//   - A point whose body is held (or can never be, being invalid) is never
//     requested again until it is pruned; the decision logic's missing
//     txs of a point are exactly the LeiosDB's (CheckConsistency).
//   - A peer that goes away releases its budget; its requests are re-planned.
//
// # Never
//
// It never writes the LeiosDB or the cache outside the handlers, never
// holds its state lock across I/O, never trusts a reply it has not checked
// against its request, and never imports notify or node: notify calls the
// handlers through the node's wiring.
package fetch
