// Package admission is the node's edge: it decides, from how far behind
// the node is, whether new txs are taken in, so that load beyond what the
// node can carry is refused where it enters — at once, with a reason and
// a time to come back — instead of being absorbed until everything is
// late.
//
// A Leios node falls behind in three ways, and each closes the edge:
//   - Leios work: the node missed the voting window of its latest EBs (the
//     closure was not held and checked before the window closed). New txs
//     would make the next EBs bigger and the node later still; the edge
//     stays closed until an EB is checked in time again, or until no EB
//     has come for a while to judge.
//   - The mempool's queue delay: the oldest tx held was admitted longer ago
//     than MaxQueueDelay, or the mempool holds more txs than MaxBacklogTxs
//     or more bytes than MaxBacklogBytes, what the chain takes within that
//     delay. The chain is not taking txs
//     as fast as they come; the backlog, and every tx's wait, would only
//     grow. The wait measured adapts to whatever rate the chain carries (a
//     queue kept at a target delay, as active queue management keeps a
//     router's buffer short); the count foresees it, so that a surge is
//     refused at once rather than once its first txs have waited.
//   - Sync: the selected tip is far behind the clock; txs validated against
//     it would be validated against a stale ledger.
//
// The mempool's byte bound stays the hard limit behind these (HighWater
// refuses a little before it, so a refusal is an answer, not a wait).
//
// Refusals are per path. A local submission (the HTTP API: wallets, which
// retry) is refused for any of the reasons. Tx submission from peers is
// paused only while syncing or near the byte bound: those txs were
// admitted at a peer's edge already, and holding them in the mempool is
// what lets this node take an EB's closure from its mempool instead of
// fetching and verifying it inside the voting window.
//
// When several reasons hold, a refusal names one: sync first, then the
// byte bound — the two that pause both paths, so both give the same
// reason —, then Leios work, then the queue delay (the order of the Reason
// constants).
//
// Decide is a pure function of the figures, so every shedding decision is
// tested by feeding it figures; Gate re-decides on a short interval and
// serves the latest decision from an atomic, so asking costs nothing. This
// package must never block a caller that only asks (Gate.Admit), and never
// read a store itself: the node hands it the figures.
//
// docs/operations.md, "Refusals", lists the reasons as operators meet
// them: when each holds, on which path, and what ends it.
package admission
