// Package chaindb stores ranking blocks (RBs), selects the chain, tracks the
// immutable tip and keeps the ledger's UTxO set in the UTxO-HD style, all on
// one Pebble database (ARCHITECTURE.md).
//
// The chain:
//   - Blocks are stored by hash; the selected chain is indexed by block number.
//   - Chain selection is "longest chain"; of two as long, the one whose tip
//     has the lower leader VRF output when the tips are at most
//     Options.TiebreakSlots apart (Praos's restricted VRF tiebreaker), else
//     the current selection.
//     A block is only accepted if its predecessor is in the volatile tree: the
//     immutable tip (K blocks behind the tip) and the stored blocks that
//     descend from it. So no selection change ever rolls back more than K
//     blocks.
//   - A block that fails validation (Options.ValidateBlock or
//     Options.ApplyBlock) is remembered as invalid, together with its stored
//     descendants, and the selection stays where it was.
//   - A block ApplyBlock cannot judge yet (ErrNotReady: a CertRB whose EB
//     closure is incomplete) is parked: stored, off the selection, not
//     invalid; Reselect retries the chains it held back.
//
// The ledger (UTxO-HD):
//   - The UTxO set at the immutable tip lives in Pebble, the backing store.
//   - Each volatile block of the selected chain keeps its in-memory
//     *ledger.Diff; the UTxO at a volatile point is the backing store plus the
//     diffs up to that point (ledger.Overlay). A rollback drops diffs.
//   - When the immutable tip advances, the diffs it passes are flushed to the
//     backing store in the same Pebble batch that moves the immutable marker.
//   - A LedgerView holds a Pebble snapshot and the diff list taken under the
//     same lock, so it stays consistent while later blocks flush. It keeps
//     the points of its diffs too, so it can say what the blocks after one
//     of them spent (SpentSince) from the same diffs its lookups read.
//   - The address index lists the outputs of an address at a volatile point
//     without a walk of the UTxO (address.go): the backing store's outputs
//     by address, kept in the batches that write the backing store, and
//     each volatile block's created outputs by address, kept with its diff.
//     A database written before the index existed gets it built at Open.
//
// The txs on chain: chaindb owns their count (TxsOnChain). A block counts
// the txs Options.ApplyBlock applied for it (ledger.Diff.Txs), which for a
// block carrying a certificate is the certified closure, not its body. The
// volatile blocks' counts travel with their diffs; the count through the
// immutable tip is stored with the immutable marker. So nothing ever walks
// back to origin to count, and a reopened database has the count at once.
//
// Invariants, also after a crash at any point:
//   - Every multi-key change is one Pebble batch: a block together with the
//     selection change, the tip marker, the flush, the immutable marker
//     and the tx count through it.
//     A reopened database is therefore at a consistent tip (the last one, or
//     an earlier one if the tail of the WAL was lost) whose ledger is the
//     backing store at the immutable marker plus a replay of the blocks after it.
//   - The immutable tip never goes back: it is also kept in a marker file
//     outside Pebble, and a database whose lost WAL tail took it back is
//     refused at Open (immutable.go).
//   - A database is created only in a missing or empty directory, and
//     belongs to one network (internal/pebblestore).
//   - The selected chain is linked and numbered contiguously from 1, and
//     passes through the immutable tip, at most K blocks behind its end.
//   - The backing store equals the UTxO of the selected chain at the
//     immutable tip, and the stored count the txs from origin through it.
//   - The address index holds exactly the backing store's outputs (Check
//     verifies it).
//
// chaindb must never import the ledger rules, a protocol, or another store:
// it gets validation through Options and is driven by its callers. It must
// never block AddBlock on a reader: TipChanged wakes waiters by closing a
// channel.
package chaindb
