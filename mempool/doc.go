// Package mempool is the double-buffered mempool (ARCHITECTURE.md): the txs this
// node has admitted and not yet seen on its chain, in the order they were
// admitted, validated against the ledger at the selected tip.
//
// The state is an immutable Snapshot (txs in ticket order, their byte total,
// the UTxO after them, the tip they were validated against) published
// through an atomic pointer. Three kinds of writers produce snapshots:
//
//   - Add validates one tx fully (ledger apply, signatures included) against
//     the latest snapshot's UTxO and publishes the snapshot extended by it.
//     Adds are serialized in arrival order (FIFO) by the add lock. AddTxs
//     adds txs that arrived together as Add adds each, their signatures
//     verified together first, off the lock.
//   - Sync, on a tip change, judges the latest snapshot's txs at the new
//     tip's ledger view off the lock, into a candidate; then, still off the
//     lock, judges the txs added since (the delta, by ticket) until the
//     delta is at most SyncDeltaCap txs or SyncMaxRounds rounds have
//     passed; only then it takes the add lock, judges the residual and
//     publishes. The lock is held for O(SyncDeltaCap) judgments, not
//     O(occupancy). It judges one of two ways (SyncReport.Path). On a
//     chain extension (the new tip extends the tip the snapshot was
//     validated against, and the view says what the blocks since spent:
//     ExtensionView) it carries the txs: a tx stays unless the new blocks
//     spent one of its inputs, an input was created by a tx dropped now
//     and is not in the new view, or the new slot is outside its validity
//     interval. A kept tx costs no ledger read, so the sync costs the
//     blocks plus an index rebuild, not a reapply per tx held
//     (extension.go says why the verdicts are the reapply's). Otherwise (a
//     rollback, a view that cannot say) it reapplies (ledger reapply)
//     every tx on the new view.
//   - RemoveTxs drops named txs (and those that depended on them) under the
//     add lock and bumps the removal generation.
//
// Invariants:
//   - Snapshot never blocks and never takes a lock: readers (the forge, every
//     tx-submission client serving this node's txs) load the pointer;
//     per-peer cursors walk a snapshot by ticket number.
//   - Within a snapshot every tx is valid (reapply) on the tip's UTxO after
//     the txs before it; tickets strictly increase and a tx keeps its ticket
//     across syncs; the byte total never exceeds the capacity.
//   - A committed sync equals one full revalidation of the txs held at the
//     commit, in ticket order, against the new tip, whichever way it judged
//     them.
//   - A removal is never undone: a sync that sees the removal generation
//     change restarts from a fresh snapshot.
//   - Snapshots are cheap to publish: within a lineage (the snapshots
//     since the last sync or removal) they share one append-only tx slice and
//     append-only indexes (tx hash, tx id and outputs spent → position,
//     derived from the tx itself; an output created is found by its tx id);
//     a snapshot of n txs ignores entries at positions ≥ n. Only the newest
//     snapshot of a lineage is ever extended, under the add lock.
//
// A tx refused only for inputs no held tx spends is not remembered as
// rejected: its parent may be on its way, or given back after a rollback.
// Relayed by a peer (AddRelayed), which offers no tx twice, it awaits
// them, and is admitted, validated in full, once a tx that creates what it
// lacked is admitted or a sync's tip has it; RejectedMemory bounds how
// many wait. A sync checks them under the add lock: a ledger lookup each.
//
// Txs are held, deduplicated and remembered as rejected by their tx hash
// (Blake2b-256 of the whole tx: what EBs, the tx cache and tx submission
// name); users name a tx by its tx id (Blake2b-256 of its body), so every
// error names the tx id, and LookupID finds a tx by it.
//
// The mempool must never make Snapshot wait for anything, never hold the add
// lock while waiting for room (that would stop the sync that frees it),
// never revalidate the whole mempool under the add lock, and never record a
// tx as rejected because a ledger read failed (only a rule failure rejects).
//
// After a rollback the mempool decides what comes back (Run, giveBack):
// the txs of the blocks the chain abandoned, then the txs the sync dropped
// because they spent those, every dependent after what it spends. The chain
// only says which txs it abandoned (Options.Abandoned), in the order the
// ledger applied them, since it alone knows them (a certified closure lives
// in another store).
//
// Ledger views: a snapshot reads the view of its tip, which the mempool
// releases once a sync has replaced it (Options.TipLedger). RemoveTxs
// revalidates under the add lock, which is fine only because removals are
// rare (a forged block the chain did not adopt).
package mempool
