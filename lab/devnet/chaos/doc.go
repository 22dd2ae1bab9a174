// Package chaos is a devnet's chaos mode: a Spec of faults (kills,
// freezes, partitions, starvation, refills, and the attacks of package
// hostile on one node, whose heap, RSS and counters it reads from the
// node's /metrics against the bounds the operations guide states), a Scheduler that injects them one at a time into
// the running nodes and watches them recover (a partition cuts the
// devnet's link proxies, package wan), and the watch of the forks the
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
//   - A partition cuts exactly the links across it (package wan's cut
//     closes every connection a link carries) and a heal restores them all.
//
// This package must never reach into a node: it acts on the nodes' OS
// processes (package supervisor) and links, attacks them only as a remote
// peer or client may (package hostile), and watches them only through
// their HTTP API (package apiclient, and /metrics).
package chaos
