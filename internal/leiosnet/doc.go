// Package leiosnet builds networks of Leios nodes in one process, for the
// diffusion tests and the `leiosbench diffusion` benchmark (DESIGN §6): N
// nodes, each a LeiosDB, a tx cache, a fetch.Fetcher and a notify.Relay
// served by a network.Host, on a libp2p mocknet whose links have a latency
// and a bandwidth, in a line or a seeded random connected graph.
//
// Every EB enters a node through the same handlers, in the same order, as
// in node.Node (node/leios.go): relay.Announce(header), then
// fetcher.Announcement, fetcher.Body, fetcher.Txs(validated); peers' data
// comes in through notify's and fetch's own clients, which call the same
// fetcher handlers. The forged headers are real: one pool holding all the
// stake with f = 1 leads every slot, and each header carries its VRF proof
// and issuer signature, so notify validates them as on a devnet.
//
// Invariants: each node records the first time it held each EB's whole
// closure (from its LeiosDB's ClosureComplete events, never by polling the
// store); bytes "fetched" are the fetch logic's own count (Stats.
// FetchedBytes: body and tx bytes received and ingested), because mocknet
// keeps no per-peer byte counters. Txs are random bytes: the LeiosDB and
// the fetch logic check only hashes and sizes, not ledger validity.
//
// It must never touch a real network (mocknet only), and every goroutine
// it starts ends by Close.
package leiosnet
