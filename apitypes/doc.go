// Package apitypes is the contract of a node's HTTP API (package api): the
// JSON of every request and answer, and the strings clients compare
// against — a 400's rule code, a 503's reason, an EB's stages, this
// node's vote and its leader's outcome on it, and the fate of an EB with
// why it was not certified.
//
// The server (api) and the parts whose values it serves (leios, forge)
// write these types; the clients (api/apiclient, the load tool, the
// devnet, its report and its live view) read them, and so link none of
// the node: its stores, its network, its pipeline. As CometBFT keeps
// rpc/core/types apart from its server.
//
// The vocabularies are defined here, once, because they are what the API
// promises: the fate of an EB (Fate*) and why one was not certified
// (Reason*) are the same words whether one node worked them out from its
// own chain (GET /api/ebs, leiosnode status --ebs) or the devnet's report
// from every node's votes and chains; an EB's stages (Stage*, EBStages)
// are the same fields in a node's answer, the report's timeline and the
// live view. The node's packages decide; these strings only name what
// they decided.
//
// Invariants:
//   - Only the standard library is imported: nothing of the module, so a
//     client never links the node (internal/layers checks it).
//   - A field's JSON name is never changed or reused: tools read old and
//     new nodes alike, and a field a node does not give reads as zero.
//
// This package must never hold behaviour beyond reading its own values
// (no I/O, no state): it is data, shared by both ends.
package apitypes
