// Package ledger owns transactions and the UTxO rules of DESIGN §2: the tx
// codec (a subset of the Conway CDDL, original bytes kept for hashing), the
// rules that admit a tx (apply: all rules including signatures; reapply:
// everything but signatures, for revalidating an already-admitted tx), the
// genesis UTxO, and the UTxO view types (Diff, Overlay) the LedgerDB and the
// mempool are built from.
//
// Every rule's failure is a distinct error naming the rule, so a peer or a
// submitter is told exactly why a tx was refused.
//
// This package must never import a store or a protocol; it reads the UTxO
// only through the UTxO interface.
package ledger
