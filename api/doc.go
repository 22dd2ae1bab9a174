// Package api is a node's local HTTP API:
//
//	GET  /status                    the node's state (Status), as JSON
//	GET  /metrics                   Prometheus
//	POST /api/submit/tx             the submit API, as cardano-submit-api
//	GET  /api/utxo/{txid}/{index}   an output unspent at the selected tip
//	GET  /api/mempool/{txid}        whether a tx is in the mempool
//	GET  /api/addresses/{address}/utxos  an address's outputs at the selected tip, as Blockfrost lists them
//	GET  /api/parameters            the protocol parameters, for wallets, with the slot length, f and the Leios limits
//	GET  /api/ebs                   each recent EB's stages here (announced, held, validated, voted) and its fate on the chain (apitypes.EBFate)
//	GET  /api/blocks                the selected chain's blocks and the txs each applied
//	GET  /debug/pprof/              Go's profiles of the running node, if Options.Pprof
//
// Every request's and answer's JSON, and the strings clients compare
// against, are package apitypes': the contract, which the clients read
// without linking the server. An EB's fate in /api/ebs is "certified"
// with certifiedBy, the CertRB's {number, slot, hash}; "pending" while its
// RB is the tip or newer; or "not certified" with a reason, one of the
// apitypes.Reason* strings, the words the devnet's report uses too. In
// /api/blocks a block that announces an EB names it in announces ({slot,
// ebHash}), and a CertRB names the EB it certifies in certifies and lists
// the txs of its closure, in the order applied, in closure.
//
// It reads the node's parts and submits to the mempool; it never writes a
// store itself, and a request never waits on a lock longer than its own
// timeout. A client is held to limits (limits.go): its headers, its whole
// request and its idle connection are timed, a body must arrive at a
// minimum rate and an answer be taken at one (each write's deadline is
// sized by its length), a body over the limit is 413, and requests beyond
// MaxRequests in flight are 503 at once. Submits take at most MaxUploads of
// those and the answers that grow with the chain MaxLargeAnswers, so
// /status and the lookups always have the rest; one client address may be
// sending at most MaxUploadsPerClient bodies at once; and over a full pool
// the slot of the slowest upload or unread answer goes to a client of
// another address that behaves. So slow or unread clients never starve
// reads or other clients, and the memory answers hold is bounded: no answer
// is built past a page (MaxAnswerBytes).
package api
