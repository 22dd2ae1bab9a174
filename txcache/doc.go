// Package txcache is the LeiosTxCache (ARCHITECTURE.md): an in-memory index of the
// txs of the last MaxAnnouncements (128) EB announcements, so the fetch logic
// decides what to request — "which of this EB's txs must I still fetch?" —
// without touching the LeiosDB.
//
// It holds three maps, each counting references from the one above:
//
//	announcements  (slot, rb_hash) → eb_hash
//	bodies         eb_hash → NotYetInserted | Inserted,         rc = announcements naming it
//	txs            tx_hash → NotYetInserted | Inserted | Validated, rc = inserted bodies naming it
//
// Over MaxAnnouncements the oldest announcement (least slot, then least RB
// hash) is evicted; a body whose rc drops to 0 goes, and so does a tx whose
// rc drops to 0. EvictOlderThan drops all announcements below a slot.
//
// The tx map is an open-addressing table of fixed capacity (table.go):
// linear probing, backward-shift deletion (no tombstones), home slots from
// xxh3 under a seed drawn from crypto/rand — tx hashes are grindable, an
// unpredictable seed is what stops hash flooding, and probes are bounded so
// even a flood costs misses, not scans. A slot is two parts in two arrays:
// a 4-byte state word, which carries a tag (7 more bits of the hash), and
// the 32-byte key. Sixteen state words share a cache line, so the line at a
// key's home settles most misses alone and names the one key a hit
// compares; keys are aligned, two to a line, so none straddles one. xxh3
// is specialised to 32-byte keys (hash.go). Batches prefetch the lines of
// keys ahead of probing them (batch.go): a reader's batch runs its keys
// through three stages — hash and prefetch the state words at the home,
// scan them and prefetch the one key they point at, compare — several
// groups apart, so the cache misses of many keys are in flight at once: a
// miss waits on one line, a hit on two. The table's memory is backed by
// huge pages where the kernel has them (memory.go).
//
// Invariants:
//   - No false hits, ever: the cache reports a tx held (Inserted or
//     Validated) only if it was marked so while an inserted, still-held body
//     named it. A skipped fetch would leave a closure silently incomplete.
//   - False misses are allowed: a tx the table has no room for is reported
//     missing (and re-fetched); so may a lookup racing an eviction.
//   - A full table makes an insert a miss, counted in Stats — never a panic
//     or an error.
//   - Every reference count equals the references that exist (announcements
//     per body, counted inserted bodies per tx).
//
// Ordering contract (the hit-prune hazard). A hit means "the LeiosDB holds
// this tx, kept alive by a body there": the fetch logic then skips the fetch.
// If the cache outlived the LeiosDB data a hit vouches for, a closure would
// stay incomplete or be falsely complete. So callers must:
//  1. insert into the LeiosDB before the cache (body, then txs);
//  2. insert the announcement before its body, the body before its txs'
//     marks (the cache refuses a body not announced, and marks a tx no body
//     names as MarkExtra, changing nothing);
//  3. on immutable-tip advance, call EvictOlderThan before the LeiosDB GC runs.
//
// The cache cannot see the LeiosDB, so it enforces only point 2.
//
// Concurrency: writers (announcements, bodies, marks, evictions) are
// serialized by a writer mutex. Tx lookups take no lock and never wait for a
// writer's batch: they validate against per-stripe sequence words that only
// a deletion's shift makes odd (see table). LookupBody takes a read lock that
// writers hold only around small map updates. A lookup is a moment's view:
// a hit read just before an eviction is stale after it, as with any lock.
//
// This package must never do I/O, block a reader on a writer's batch, or
// report a tx held that it cannot vouch for.
package txcache
