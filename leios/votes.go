package leios

import (
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// validateVotes is the relay's check of a batch of votes new to it: each
// from a real seat of the committee, each signature verifying, in one
// randomized batch.
func (p *Pipeline) validateVotes(votes []block.Vote) error {
	return errors.Join(p.opts.Validator.Committee().VerifyVotes(votes)...)
}

// Vote relays this node's own vote to every peer, through the same checks
// as a peer's.
func (p *Pipeline) Vote(v block.Vote) error {
	fresh, err := p.relay.Votes([]block.Vote{v})
	if err != nil {
		return fmt.Errorf("leios: own vote for %s: %w", v.RbHash.Short(), err)
	}
	if len(fresh) > 0 {
		p.votesCast.Add(1)
		p.countVotes(fresh)
	}
	return nil
}

// countVotes adds relayed votes to their EBs' counts (EBTimes).
func (p *Pipeline) countVotes(votes []block.Vote) {
	for _, v := range votes {
		p.ebs.countVotes(v.RbHash, 1)
	}
}

// Votes returns the votes relayed for the RB rbHash, by seat: what a
// certificate is built from.
func (p *Pipeline) Votes(rbHash block.Hash) []block.Vote { return p.relay.VotesFor(rbHash) }

// Equivocated reports whether two headers were seen for this slot and
// issuer: the EBs they announce get no votes.
func (p *Pipeline) Equivocated(slot uint64, issuer block.Bytes32) bool {
	return p.relay.Equivocated(slot, issuer)
}

// RecordVote notes what became of this node's vote on the EB at pt, for
// EBTimes.
func (p *Pipeline) RecordVote(pt block.Point, outcome string) { p.ebs.recordVote(pt, outcome) }
