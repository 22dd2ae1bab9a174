// Package cpuwork says which work the node's CPU does, and how much: when
// a Leios voting window is missed, which subsystem had the CPU.
//
// It owns two things:
//   - Labels. Each subsystem runs its goroutines under the pprof label
//     work=<kind> (Do, Context), from a fixed set of kinds (Kinds). A
//     goroutine started by a labelled goroutine inherits its labels, so a
//     subsystem labels the top of each goroutine it owns and everything it
//     starts from there is counted with it. Inheritance also carries a
//     label where it does not belong: a library's background goroutine
//     inherits the label of whichever goroutine happened to start it.
//     Pebble starts its flushes and compactions from the commit that
//     filled a memtable, and then runs most of that work under labels of
//     its own (pebble=flush, compact, wal-sync, gc) that drop the work
//     label, but not all of it (collecting table stats keeps the
//     committer's). Go's background GC workers carry no label.
//   - The Sampler. It runs Go's CPU profiler without pause, in windows
//     (5 s by default), and adds each window's samples to a total per
//     kind: Seconds, and the Prometheus counter
//     leiosnode_cpu_seconds_total{work}. So that inherited labels do not
//     mislead it, a sample is classified by its stack first (classify):
//     Go's background GC workers are gc, Pebble's background work (by its
//     stack or its pebble label) is store; then by its work label; then
//     unlabelled work in libp2p's packages is network; the rest is other.
//     Since the sampler holds Go's one CPU profiler, it also serves
//     /debug/pprof/profile (Profile, ProfileHandler) from its windows.
//
// The totals are a sampled estimate. The profiler samples each thread's
// CPU at 100 Hz, so a sample stands for about 10 ms: over a window of
// seconds a kind's total is good to a few percent, and a burst shorter
// than a few samples may not show at all. They run a little under the
// process's CPU time: each window's start loses part of a sample interval
// on each busy thread. Profiling costs about 1 % of CPU. The sampler's own
// work (parsing each window, a few milliseconds) counts as other.
//
// Invariants:
//   - A kind's label value is its name, and its label set is built once:
//     labelling is on hot paths (every tx admitted).
//   - A window ends by stopping the profile and the next starts at once,
//     before the ended one is parsed: nothing is lost between windows but
//     the profiler's restart (about a millisecond on Linux; on macOS,
//     where runtime/pprof reads the profiler every 100 ms, up to that; on
//     a machine loaded several times over, as long as the profiler's
//     writer waits to be scheduled: up to a hundred milliseconds).
//   - A sample is counted once, in one kind; an unknown work label counts
//     as other, so the counter's work label takes only the values of Kinds.
//   - Seconds and the counter only grow.
//
// It never fails the node: a window it cannot start (another CPU profile
// holds the profiler) or parse is logged and skipped, and the sampler
// tries again at the next window. It imports nothing from the node: the
// subsystems label themselves.
package cpuwork
