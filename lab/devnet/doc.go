// Package devnet runs a local devnet from outside, one OS process per node,
// as an operator would:
//
//   - Run writes a devnet (package layout), starts every node as
//     `NodeExecutable run --config FILE` (package supervisor), prints a status line a second while the tx firehose
//     (package load) feeds the nodes from the funded keys, then reads every node's
//     chain, checks where every admitted tx ended up and what became of
//     every EB, and stops the nodes. Then it hands what it observed to
//     package report, which measures the CPU floor of a tx on the
//     firehose's txs and builds the JSON Report that also sums the run up
//     over time (a timeline of 10 s windows: EB stages, missed
//     voting windows, rates, the nodes' CPU by work), over its measured
//     span after the warm-up (targets) and per 1,000 txs on chain.
//   - With Options.UIAddr, Run serves a live view of the devnet (package
//     ui) and hands it every round of its polls, each node's EB list
//     included.
//   - With a chaos.Spec, Run also kills and restarts, freezes and thaws
//     nodes and partitions them, one fault at a time, watches the nodes
//     recover from each (package chaos), and the report gets a chaos
//     section. For partitions the nodes dial one another through a TCP proxy
//     per link (package wan) that the chaos mode can cut.
//   - With a topology (layout.Spec.Topology) or a link shape
//     (layout.Spec.LinkShape) the same proxies emulate each link's latency
//     and bandwidth, and before the nodes stop Run accounts for every
//     node's connections and bytes against what the links carried (the
//     report's links section).
//
// Invariants:
//   - The supervisor watches its nodes only through their processes and
//     each node's local HTTP API (GET /status, /api/ebs, /api/blocks): it
//     never shares memory with them, so a node can be killed with kill -9
//     and restarted by hand with the command line Run printed (the chaos
//     mode restarts one with that same command line). The link proxies
//     only forward bytes: the libp2p handshake runs end to end.
//   - The firehose, likewise, submits txs only through a node's submit API
//     and checks their fate through its chain and its lookups (package
//     load, the same code an operator runs against any network).
//   - The report is built after the nodes have stopped, so that the CPU
//     floor measured in this process does not share their cores; the
//     nodes' own CPU is only what their /status reports.
//   - When Run returns, every node process it started has exited (a frozen
//     one is thawed first): each got SIGTERM, then SIGKILL after a
//     timeout. On Linux the kernel also sends them SIGTERM should the
//     supervisor die first.
//
// This package must never import node: only cmd links a node in. What it
// knows of a node is the files it writes for it, the JSON of its API
// (through package apiclient, with forge's vote outcomes) and its OS process.
package devnet
