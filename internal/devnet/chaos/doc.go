// Package chaos is a devnet's chaos mode: a Spec of faults (kills,
// freezes, partitions), a Scheduler that injects them one at a time into
// the running nodes and watches them recover, the TCP proxies of a devnet's
// links that a partition cuts (LinkMesh), and the watch of the forks the
// nodes' statuses show (ForkWatch).
//
// Invariants:
//   - One fault at a time: a fault that falls due while another lasts, or
//     while the nodes still recover, waits; each recovery is that of one
//     fault. A fault not recovered from within the recovery timeout stops
//     the chaos mode, and Stopped says why.
//   - A seed gives each kind the same victims and intervals in the same
//     order.
//   - When Run's ctx ends, a fault under way ends at once (the killed node
//     restarted, the frozen one thawed, the links restored).
//   - The link proxies only forward bytes: the libp2p handshake runs end to
//     end through them, and a cut closes every connection a link carries.
//
// This package must never reach into a node: it acts on the nodes' OS
// processes (package supervisor) and links, and watches them only through
// their HTTP API (package apiclient).
package chaos
