// Package leiosdb is the LeiosDB: the node's deduplicating store of endorser
// blocks (EBs) on Pebble.
//
// # Job
//
// It keeps the EBs the node has heard of, by point (the announcing RB's slot
// and the EB hash), their bodies and the transactions of their closures. It
// tells the fetch logic what is still missing, serves bodies and txs to the
// fetch server, reports (through a subscription) when a body or a whole
// closure is held, so that notify can offer it, and forgets volatile EBs once
// the immutable tip has passed them.
//
// # Keyspaces
//
// Every key starts with one byte naming its keyspace (see keys.go):
//
//	'p' slot ‖ eb_hash        → eb_size, flags (promoted)     every known point
//	'v' slot ‖ eb_hash        → ∅                             volatile points, slot order (GC index)
//	'h' eb_hash ‖ slot        → ∅                             points by EB hash
//	'b' eb_hash               → body bytes, as received        held bodies
//	'c' eb_hash               → missing-tx count, body size   state of a held body
//	'x' tx_hash               → tx bytes                      held txs
//	'r' tx_hash               → ∅                             txs a promoted body held (pins)
//	'm' "schema"              → version
//	'm' "net"                 → genesis hash ‖ about        the network (pebblestore)
//
// What storing or dropping a body needs of its thousands of txs is kept in
// memory only (txindex.go), so that it reads nothing from Pebble: for each
// stored tx a volatile body holds, its size and the number of those
// bodies; for each tx a held body misses, where. Open rebuilds both from
// the volatile and the incomplete bodies, the stored txs and the pins.
// (Schemas 1 and 2 stored them as 't' and 'w'; Open deletes those and
// writes the pins.)
//
// Bodies are deduplicated by EB hash: the same hash announced at two slots is
// two points sharing one body. Txs are stored once, whatever number of bodies
// name them. Because a body fixes its closure, the missing-tx count and the
// reverse index belong to the body (keyed by EB hash), not to each point: a
// tx arrival discharges it for every point of every body that names it.
//
// A body holds the txs that a volatile body held when it arrived and those
// that arrived after it. A tx kept only for certified closures (pinned, out
// of memory) is missing for a body that names it again: it is on the
// immutable chain, so such an EB is invalid, and finding out would cost a
// Pebble probe for every new tx of every body. When it arrives again it is
// stored again (the same bytes), and its pin keeps it.
//
// A point "holds" its body when the body is stored and the point's announced
// size equals the body's length; only such points get events and completions.
//
// # Invariants (checked from scratch by CheckConsistency)
//
//   - 'v' holds exactly the points of 'p' that are not promoted; 'h' holds
//     exactly the points of 'p', keyed by hash first.
//   - A body is stored ('b' and 'c' together) only while some point names its
//     hash; it is a valid EB body whose hash is its key.
//   - A tx is stored ('x') only while a volatile body holds it or a pin
//     keeps it; its hash is Blake2b-256 of its bytes. A pin is stored only
//     with its tx, and every tx a promoted body holds has one.
//   - A stored body's missing count is the number of its offsets the index
//     lists as missing: every offset whose tx is not stored, and none whose
//     tx is stored and unpinned.
//   - A stored body's declared tx sizes agree with the stored txs it holds.
//   - The index holds exactly the stored txs volatile bodies hold, each with
//     the number of those bodies.
//
// Every change that touches more than one key is one Pebble batch, and all
// writers are serialized, so each invariant holds between batches. Writes do
// not fsync by default: Pebble's write-ahead log replays whole batches or
// none, so a crash (kill -9, or power loss) may lose the last few batches but
// never leaves half of one. The events already sent for a lost batch were
// true when sent; after a restart the fetch logic simply fetches again.
//
// # Never
//
// It never stores a body that fails validation, never stores a tx no stored
// body names (such txs are ignored), never drops a promoted point or a pin,
// and never scans the tx keyspace outside Open and CheckConsistency: GC
// costs time proportional to the garbage (the slot-ordered volatile index
// plus the counts in memory). It never blocks a writer on a subscriber. It
// never opens an existing directory as a new store, nor a store of another
// network, and never writes after a fault (internal/pebblestore). It
// imports no protocol package.
//
// Ordering contract with the tx cache (the hit-prune hazard): callers insert
// into the LeiosDB before the cache, and evict the cache before running GC.
package leiosdb
