// Package cpuwork says which work the node's CPU does: each subsystem runs
// its goroutines under the pprof label work=<kind> (Do, Context), from a
// fixed set of kinds (Kinds), so that a CPU profile says which subsystem
// took the CPU when a Leios voting window was missed.
//
// A goroutine started by a labelled goroutine inherits its labels, so a
// subsystem labels the top of each goroutine it owns and everything it
// starts from there is counted with it. Inheritance also carries a label
// where it does not belong: a library's background goroutine inherits the
// label of whichever goroutine happened to start it. Pebble starts its
// flushes and compactions from the commit that filled a memtable, and
// then runs most of that work under labels of its own (pebble=flush,
// compact, wal-sync, gc) that drop the work label, but not all of it
// (collecting table stats keeps the committer's). Go's background GC
// workers carry no label.
//
// Invariants: a kind's label value is its name, and the label sets are
// built once, since labelling is on hot paths (every tx admitted).
//
// It imports nothing from the node: the subsystems label themselves.
package cpuwork
