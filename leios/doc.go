// Package leios is one node's Leios pipeline: the path every endorser block
// (EB) takes through the node, whether the local forge made it or a peer
// sent it. It builds and holds the LeiosDB, the LeiosTxCache, the LeiosFetch
// decision logic (fetch.Fetcher) and the LeiosNotify relay (notify.Relay),
// and owns the handlers that connect them.
//
// # The path of an EB
//
//  1. Announcement: an RB header that announces an EB, validated by its
//     source (chain sync, the forge, or a peer's notify stream), is relayed
//     to every peer once (Announce), then its point goes into the LeiosDB,
//     the announcement into the tx cache, and the fetch logic wants the body.
//
//  2. Body: from a peer's fetch reply or the forge (Publish, which takes the
//     decoded EB — nothing is decoded twice). It goes into the LeiosDB, whose
//     commit makes the relay offer it, then into the tx cache, whose answer —
//     the txs not yet held — seeds the fetch logic's missing set, less the
//     txs the mempool holds, which are stored from there at once (and so
//     are those it admits later, as it admits them).
//
//  3. Txs of the closure: from peers (unvalidated) or the forge (validated).
//     Into the LeiosDB (each stored once, discharged from every EB that
//     misses it; a closure made complete makes the relay offer it), then
//     marked in the tx cache, then discharged in the fetch logic.
//
//  4. Pruning: when the immutable tip passes slot s, the tx cache is evicted
//     first, then the LeiosDB collects its garbage, then the fetch logic and
//     the relay forget the state below s.
//
//  5. Votes: the relay takes votes for the RBs it accepted, checked in
//     batches against the committee (Validator), and relays them; the forge
//     casts this node's (Vote) and reads an RB's votes to certify its EB
//     (Votes).
//
//  6. Certified EBs on the ledger: the chain applies blocks through
//     ApplyBlock, which checks a CertRB's certificate against its parent and
//     applies the certified closure before the block's own txs. A CertRB
//     whose closure is not complete here is parked (chaindb.ErrNotReady);
//     its closure is fetched first, from any peer, and the chain reselects
//     when it completes; a CertRB chain sync brings ahead of the chain has
//     its closure fetched at once (FetchAhead). Certified EBs are promoted
//     before GC.
//
// One follower of the LeiosDB (leiosdb.Follower, which catches up after a
// lag) turns its commits into the relay's offers, the node's record of when
// each EB's body and closure were first held, and the reselection of a
// parked CertRB.
//
// # What became of an EB
//
// The EB log (EBTimes, GET /api/ebs) gives each EB its fate on this node's
// selected chain (fate.go), worked out from the chain's headers each time
// the list is asked for, so a rollback changes it back. Only the block
// right after the announcing RB may certify the EB, so the fate is settled
// once that block is on the chain:
//
//   - certified: that block certifies it (consensus.CertifiedByHeader);
//     CertifiedBy names the CertRB.
//   - pending: the announcing RB is the tip, or newer than the tip.
//   - not certified, with one reason (the Reason* constants): no RB on
//     the chain announces it (ReasonOffChain; two leaders of one slot
//     with the same txs announce the same EB, and either may be it), its pool
//     announced two EBs in the slot (ReasonEquivocation), the next block
//     came within MinCertGap slots (ReasonTooEarly), the closure did not
//     apply (ReasonInvalid), the closure was not all here in the voting
//     window (ReasonIncomplete), the RB became the tip only after the
//     voting window (ReasonLateTip), or the next block's leader held no quorum
//     of votes (ReasonNoQuorum). When this node forged the next block,
//     what it found then decides.
//
// # Invariants
//
//   - The ordering contract of the tx cache (the hit-prune hazard): the
//     LeiosDB is written before the cache, announcement before body before
//     txs, and pruning evicts the cache before the LeiosDB GC. The handlers
//     run one at a time (ingestMu), so the cache has one writer.
//   - An offer never precedes its announcement (the relay holds it back), and
//     every offer the LeiosDB's state warrants is sent, also after a restart
//     or a lagging subscription.
//   - Each header's announcement is ingested once, however many peers and
//     paths bring it.
//
// # Never
//
// The pipeline never validates a header itself (its source does), never
// adds a block to the chain (it only applies the blocks the chain gives it,
// and asks it to reselect), and never imports node: node and the
// multi-node test harness both build it with Open, the same way.
package leios
