// Package load is the tx firehose: an operator's tool that loads any
// network through its nodes' HTTP APIs, as the devnet does its own, and
// says at the end what became of every tx.
//
//   - New reads what an operator has: the nodes' API URLs, funded payment
//     signing keys, the protocol parameters (GET /api/parameters) and each
//     key's outputs (GET /api/addresses/{addr}/utxos) — never a genesis
//     file. Run then submits chains of real signed txs, one chain per key,
//     each pinned to one node, paced to the rate and batched, a POST
//     /api/submit/txs a node every BatchWindow: plain payments, built from
//     a template of the ledger's bytes (a signature and two hashes a tx),
//     or padded with metadata to sizes drawn from a distribution (TxSize);
//     Counts says what was offered, admitted and refused so far, in txs
//     and bytes.
//   - Sweep, AwaitInFlight and Settle end a run: the txs a node dropped go
//     again, the last ones get time to reach the chains, then every node's
//     chain is walked and its mempool asked, and the Report says where
//     every admitted tx is, the latencies and the loss; CheckCapacity
//     puts what the chain carried beside the network's structural
//     capacity (package capacity), which the load command models from the
//     network's GET /api/parameters.
//
// Invariants:
//   - Every tx of a chain goes to the chain's node, in batches the node
//     adds in order, and a tx goes only in the batch of its parent or
//     after its parent was admitted, so a tx never reaches a node before
//     its parent; chains never share an output, so they never conflict.
//   - A 503 is answered as a wallet would: the same txs go again after
//     its Retry-After. Like a wallet, the firehose holds on to its admitted
//     txs and sends again those a node dropped (a node killed with them in
//     its mempool); lost means a tx is on no chain and in no mempool at
//     the end.
//   - The final check reads the chains between two walks, so a tx that
//     moves from a mempool to a chain meanwhile is still placed.
//
// This package must never import node or the server's parts: it knows a
// node only by its URL and the JSON of its API, through package apiclient.
package load
