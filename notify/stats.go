package notify

import "sync/atomic"

// voteStats count what became of the votes the relay was given.
type voteStats struct {
	relayedVotes  atomic.Uint64
	invalidVotes  atomic.Uint64
	outsideWindow atomic.Uint64
}

// VoteStats counts votes since NewRelay.
type VoteStats struct {
	Relayed       uint64 // new and valid: queued to every peer
	Invalid       uint64 // refused: unknown RB, seat or signature
	OutsideWindow uint64 // not relayed: too late or too early
}

// VoteStats returns the vote counts.
func (r *Relay) VoteStats() VoteStats {
	return VoteStats{
		Relayed:       r.stats.relayedVotes.Load(),
		Invalid:       r.stats.invalidVotes.Load(),
		OutsideWindow: r.stats.outsideWindow.Load(),
	}
}
