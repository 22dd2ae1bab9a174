package notify

import "sync/atomic"

// voteStats count what became of the votes the relay was given.
type voteStats struct {
	receivedVotes atomic.Uint64
	verifiedVotes atomic.Uint64
	relayedVotes  atomic.Uint64
	queuedVotes   atomic.Uint64
	invalidVotes  atomic.Uint64
	outsideWindow atomic.Uint64
	repeatedVotes atomic.Uint64
	shedVotes     atomic.Uint64
	equivocations atomic.Uint64
}

// VoteStats counts votes since NewRelay.
type VoteStats struct {
	Received      uint64 // given to the relay, by peers and by this node
	Verified      uint64 // handed to the signature check: each vote once
	Relayed       uint64 // new and valid: queued to every peer not known to hold it
	Queued        uint64 // copies queued to peers: a relayed vote's to each, and a stream's catch-up
	Invalid       uint64 // refused: unknown RB, seat or signature
	OutsideWindow uint64 // not relayed: too late or too early
	Repeated      uint64 // sent twice by one peer on one stream: its violation
	Shed          uint64 // past a peer's verification budget: dropped unchecked
	// Equivocations counts the (slot, issuer)s for which a second header
	// was accepted: relayed once as evidence, its EBs never voted for.
	Equivocations uint64
}

// VoteStats returns the vote counts.
func (r *Relay) VoteStats() VoteStats {
	return VoteStats{
		Received:      r.stats.receivedVotes.Load(),
		Verified:      r.stats.verifiedVotes.Load(),
		Relayed:       r.stats.relayedVotes.Load(),
		Queued:        r.stats.queuedVotes.Load(),
		Invalid:       r.stats.invalidVotes.Load(),
		OutsideWindow: r.stats.outsideWindow.Load(),
		Repeated:      r.stats.repeatedVotes.Load(),
		Shed:          r.stats.shedVotes.Load(),
		Equivocations: r.stats.equivocations.Load(),
	}
}
