// Package leiosnet builds networks of Leios nodes in one process, for the
// diffusion tests and the `leiosbench diffusion` benchmark: N nodes, each a
// Leios pipeline (leios.Open, as the node builds it) served by a
// network.Host, on a libp2p mocknet, in a line or a seeded random
// connected graph. Each link has a latency and a bandwidth, which the
// harness applies itself (shaper.go): every byte costs its serialization at
// the link rate, queued behind the bytes before it, plus the latency, and
// an idle link banks nothing.
//
// It never re-implements the pipeline: a forged EB enters a node through
// leios.Pipeline.Publish, and peers' data through the pipeline's own notify
// and fetch clients. The forged headers are real: one pool holding all the
// stake with f = 1 leads every slot, and each header carries its VRF proof
// and issuer signature, so notify validates them as on a devnet.
//
// Invariants: a node's closure times are the pipeline's record of when it
// first held each closure (from its LeiosDB's events, never by polling the
// store); bytes "fetched" are the fetch logic's own count (body and tx
// bytes received and ingested), because mocknet keeps no per-peer byte
// counters. Txs are random bytes: the LeiosDB and the fetch logic check
// only hashes and sizes, not ledger validity.
//
// It must never touch a real network (mocknet only), and every goroutine
// it starts ends by Close.
package leiosnet
