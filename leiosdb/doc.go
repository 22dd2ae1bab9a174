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
//	't' tx_hash               → refcount, tx size             held txs (the membership index)
//	'x' tx_hash               → tx bytes                      held txs
//	'm' "schema"              → version
//	'm' "net"                 → genesis hash ‖ about        the network (pebblestore)
//
// Which held bodies miss which txs is kept in memory only (txindex.go): it
// follows from the bodies, their missing counts and 't', and Open rebuilds
// it. (Schema 1 stored it as 'w' tx_hash ‖ eb_hash; Open deletes those.)
//
// Bodies are deduplicated by EB hash: the same hash announced at two slots is
// two points sharing one body. Txs are stored once, whatever number of bodies
// name them. Because a body fixes its closure, the missing-tx count and the
// reverse index belong to the body (keyed by EB hash), not to each point: a
// tx arrival discharges it for every point of every body that names it.
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
//   - A tx is stored ('t' and 'x' together) only while some stored body names
//     it; its refcount is the number of stored bodies naming it, its recorded
//     size is its length, its hash is Blake2b-256 of its bytes.
//   - A stored body's missing count is the number of its offsets whose tx
//     is not stored; the index in memory lists each such offset under its
//     tx, and nothing else.
//   - A stored body's declared tx sizes agree with the stored txs.
//
// The 't' records of the volatile window's txs are also held in memory
// (txindex.go), built by Open: every body stored or dropped reads the refs
// of all its txs; a map answers them without a seek through Pebble's
// levels. A tx only promoted bodies name leaves the map (the certified
// closures are kept for good; the memory must not grow with them) and is
// read from Pebble when asked for. Between writers the index is exactly the
// stored txs that volatile bodies name, and the txs the bodies miss.
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
// body names (such txs are ignored), never drops a promoted point, and never
// scans the tx keyspace outside Open and CheckConsistency: GC costs time
// proportional to the garbage (the slot-ordered volatile index plus
// reference counts). It never blocks a writer on a subscriber. It never opens an existing
// directory as a new store, nor a store of another network, and never writes
// after a fault (internal/pebblestore). It imports no protocol package.
//
// Ordering contract with the tx cache (the hit-prune hazard): callers insert
// into the LeiosDB before the cache, and evict the cache before running GC.
package leiosdb
