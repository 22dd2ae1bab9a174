// Package txsubmission is the tx-submission mini-protocol, in the shape of
// Cardano's TxSubmission2: pull-based, the side that wants txs asks for
// them.
//
// Roles are Cardano's: the side that opens the stream is the client and
// serves txs from its mempool; the side that accepts it is the server and
// pulls. Every node opens a stream to every peer, so on each connection
// txs flow both ways. Txs are named by their hash — Blake2b-256 of the
// whole serialized tx, what EBs and the tx cache use — not by Cardano's tx
// id (the body hash).
//
// The client sends init, then answers. To request tx ids [blocking, ack,
// req] it drops the ack oldest ids from its window of unacknowledged ids
// and announces up to req txs after its cursor: the ticket of the last tx
// it announced, so it walks the mempool's snapshots in ticket order, one
// TxsAfter call per request and no lock per tx. A blocking request waits
// for a new tx (Mempool.Changed), then BatchWait for more, or KeepAlive
// with none: then the client says done and the host opens a new stream,
// so a quiet network times nobody out. To request txs it sends those of
// the named txs the mempool still holds, in request order, leaving out
// the rest.
//
// The server keeps the window from its side: it asks for ids blocking when
// every announced id is dealt with (and acknowledges them all), non-blocking
// to top the window up while it still has txs to fetch, and fetches the
// announced txs in batches. It never fetches a tx the mempool holds or
// rejected lately, nor one twice; it hands each reply's txs to the mempool
// in one AddTxs (their signatures checked together), which waits for room
// and so slows the pull.
//
// Invariants: at most MaxUnackedTxIds ids are unacknowledged. Each side
// checks the other: a server that acknowledges more than was announced,
// asks for more ids than the window holds, blocks with ids unacknowledged,
// or asks for a tx not announced is a violation (client side); a client
// that announces more ids than asked or a size out of bounds, answers a
// blocking request with nothing, sends a tx not asked for, out of order or
// of another size than announced, or more than MaxInvalidTxs invalid txs
// within InvalidTxWindow, is a violation (server side). A reply is checked
// whole before any of its txs is added. Only txs invalid whatever the
// ledger state count as invalid (IsInvalidTx): a peer's mempool legitimately
// holds txs that conflict with ours.
//
// The host runs both roles through Service (service.go).
//
// This package must never touch the mempool except through Mempool, never
// take a lock per tx, and never wait on any peer but its own session's.
package txsubmission
