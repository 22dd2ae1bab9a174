// Package ledger owns transactions and the UTxO rules of docs/protocol.md, "Wire formats": the tx
// codec (a subset of the Conway CDDL, metadata included, original bytes
// kept for hashing), the rules that admit a tx (apply: all rules including
// signatures; reapply: everything but signatures, for revalidating an
// already-admitted tx), the genesis UTxO, and the UTxO view types (Diff,
// Overlay) the LedgerDB and the mempool are built from.
//
// Invariants:
//   - A Tx keeps the bytes it was decoded from; its ID (Blake2b-256 of the
//     body) and Hash (Blake2b-256 of the whole tx) are over those bytes, never
//     over a re-encoding. A Tx is immutable and safe to share.
//   - Apply and Reapply only read the UTxO they are given; a tx's effect is
//     returned as a Diff, written only once every rule has passed.
//   - Whatever Apply accepts, Reapply accepts with the same diff.
//
// Every rule's failure is a distinct error naming the rule, so a peer or a
// submitter is told exactly why a tx was refused; decoding failures name the
// unsupported feature (certificates, multi-assets, scripts, …).
//
// This package must never import a store or a protocol; it reads the UTxO
// only through the UTxO interface. It holds no mutable package state (the
// CBOR modes and the tables of feature names are read-only). Its only
// goroutines decode a batch and check its signatures ahead
// (ApplyTxsVerified, ApplyBatch, VerifySignatures), and it waits for them.
//
// Witness signatures are verified with curve25519-voi under the rules of
// crypto/ed25519.Verify, exactly (witness.go says which options and why):
// the same signatures are accepted and refused as with the standard
// library, at a lower cost.
package ledger
