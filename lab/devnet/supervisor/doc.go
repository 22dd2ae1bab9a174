// Package supervisor runs a devnet's nodes as OS processes, `leiosnode run
// --config FILE` each, and kills, restarts, freezes and thaws them on
// demand (the chaos mode's faults).
//
// Invariants:
//   - When Stop returns, every process Start or Restart started has exited
//     and been reaped (a frozen one is thawed first): each got SIGTERM,
//     then SIGKILL after the stop timeout. On Linux the kernel also sends
//     them SIGTERM should the supervisor die first, so a crashed supervisor
//     leaves no node behind.
//   - A node's output is appended to its log file, and CommandLine is the
//     shell command that starts it again by hand, the one Restart runs.
//   - A process's exit is known only once it has been reaped: ExitState is
//     "" until then.
//
// This package must never read a node's API or files beyond its config
// path and log: it knows a node only as a process.
package supervisor
