// Package capacity is the structural ceiling of a Linear Leios network
// running this node: from a genesis' timing and Leios limits and a mean tx
// size, the most txs a second its chain can carry and the latency a tx
// sees when the load is at that ceiling. The reports put what a run
// measured beside it.
//
// The capacity, per ranking block (RB) and so per mean RB interval:
//
//	p_cert   = P(d ≥ minCertGap) = (1 − f)^(minCertGap − 1)
//	EB txs   = min(ebMaxTxs, ⌊ebMaxClosureBytes / size⌋, ⌊(ebMaxBodyBytes − 5) / 39⌋)
//	RB txs   = ⌊(rbMaxBodyBytes − 7) / size⌋
//	capacity = (p_cert · EB txs + (1 − p_cert) · RB txs) / (slot length / f)   tx/s
//
// d is the gap in slots between an RB and the next: each slot has a
// leader with probability f (1 − (1 − f)^σ with σ the total stake, 1), so
// the next RB comes d ≥ g slots later when the g − 1 slots after the RB
// have none. The forge certifies the EB of its tip when its own slot is at
// least the tip's plus minCertGap (forge/certify.go): d ≥ minCertGap. A
// certifying RB (CertRB) carries no txs of its own and puts the certified
// EB's closure on chain; any other RB carries a full body. Every RB
// announces an EB (at capacity the mempool always overflows the body).
// The EB's bounds are the forge's (forge/txs.go): besides its tx count and
// closure bytes, its body holds an entry of at most 39 bytes per tx after
// a 5-byte head, and with txs of a few hundred bytes that bound binds
// first (13,443 txs). An RB body's head takes 7 bytes.
//
// The latency model (LatencyModel) is a Monte Carlo of that chain alone,
// with no queue: every EB holds whatever waits. Replay puts a run's own
// txs on the run's own RBs as an ideal network would, with EBs and RB
// bodies of their real size, so that a report can tell the latency the
// chain imposes (its leader schedule, and below capacity the queue behind
// full EBs) from what the nodes add. Chance replays them on random chains
// as long: a run of minutes sees a few dozen RBs, and its p95 and
// certified share scatter with their gaps whatever the nodes do.
//
// Invariants: a Model is a function of its inputs; the Monte Carlos have
// fixed seeds, so the same inputs give the same figures.
//
// This package must never read a store or the network, nor hold state:
// it is arithmetic on what it is handed.
package capacity
