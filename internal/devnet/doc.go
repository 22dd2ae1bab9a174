// Package devnet generates a local devnet and runs it from outside, one OS
// process per node, as an operator would:
//
//   - Write lays out a devnet: genesis (from a Template), keys, and each
//     node's config and topology. The genesis command is Write.
//   - Run writes a devnet, starts every node as `NodeExecutable run
//     --config FILE`, prints a status line a second while a tx firehose
//     feeds the nodes from the genesis funds, then reads every node's
//     chain, checks where every admitted tx ended up and what became of
//     every EB, stops the nodes and writes a JSON Report.
//   - SubmitTx is the client of a node's submit API that the firehose uses,
//     and the submit command too.
//
// Invariants:
//   - The supervisor watches its nodes only through their processes and
//     each node's local HTTP API (GET /status, /api/ebs, /api/blocks): it
//     never shares memory with them, so a node can be killed with kill -9
//     and restarted by hand with the command line Run printed.
//   - The firehose, likewise, submits txs only through a node's submit API
//     and checks their fate through its chain and its lookups. Each chain
//     of txs goes to one node, so a tx never reaches a node before its
//     parent.
//   - When Run returns, every node process it started has exited: each got
//     SIGTERM, then SIGKILL after a timeout. On Linux the kernel also sends
//     them SIGTERM should the supervisor die first.
//
// This package must never import node: only cmd links a node in. What it
// knows of a node is the files it writes for it, the JSON of its API
// (package api, with forge's vote outcomes) and its OS process.
package devnet
