// Package apiclient is the client of a node's local HTTP API (package api):
// submitting a tx or a batch of them, reading its status, parameters,
// blocks, outputs and mempool. The operator commands (submit, status, tx
// send, load) and the devnet use it.
//
// Invariants:
//   - Every request has a timeout of its own, whatever the caller's
//     context, so a hung node never hangs its caller.
//   - Every answer's body is read to its end (up to a bound) before it is
//     closed, so connections go back to the pool.
//   - A 400 to a submit, or to a tx of a batch, is a *RejectedError
//     carrying the rule's code from the answer; callers decide by the code,
//     never by the wording. A 503 is a *RefusedError with the node's reason
//     and Retry-After. A 404 reads as
//     "not there" only when the node answered it in JSON.
//
// This package must never import the node, the server (package api) or
// its parts: it knows a node only by its URL and the JSON of its answers,
// package apitypes (internal/layers checks it).
package apiclient
