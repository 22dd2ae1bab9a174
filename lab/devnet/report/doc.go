// Package report turns what a devnet run observed from outside its nodes
// into its JSON report, its printed summaries and its plots: the status
// polls (ChainWatch, StatusSeries), every node's EB list and chain walk at
// the end, the firehose's final check and txs (package load) and the
// chaos mode's faults. Build sums a run up — beside the network's
// structural capacity (package capacity) at the firehose's mean tx size —
// and Write writes it and its plots. Its windows of protocol time (the
// timeline's, the certified EBs', the plotted on-chain rate's) are so many
// mean RB intervals of the genesis, never fixed durations.
//
// Invariants:
//   - The report is a function of the observations it is handed: the same
//     observations give the same report, bar the CPU floor, which Build
//     measures in this process on the firehose's txs (so only once the
//     nodes have stopped, not to share their cores).
//   - Every tx submitted is counted once in the txs section (load.Report),
//     as admitted or by why not, and every admitted tx once by where it is;
//     an EB's fate (certified by which block, or why not) is read off the
//     chain every node holds.
//
// This package must never make HTTP calls or import node: what it knows
// of the nodes is what Run polled and handed it.
package report
