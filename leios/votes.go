package leios

import (
	"fmt"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/forge"
)

// validateVotes is the relay's check of a batch of votes new to it: each
// from a real seat of the committee, the signatures — on the network's
// vote message for each vote's subject — verifying in one randomized
// batch, refused whole if one fails.
func (p *Pipeline) validateVotes(votes []block.Vote, subjects []block.VoteSubject) error {
	return p.opts.Validator.Committee().VerifyVoteBatch(votes, subjects)
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

// RecordVote notes what became of this node's vote on the EB at pt, and
// when, for EBTimes.
func (p *Pipeline) RecordVote(pt block.Point, outcome string, at time.Time) {
	p.ebs.recordVote(pt, outcome, at)
}

// RecordValidated notes when this node's check of the closure of the EB at
// pt passed, for EBTimes.
func (p *Pipeline) RecordValidated(pt block.Point, at time.Time) { p.ebs.recordValidated(pt, at) }

// RecordCertify notes what this node saw of the votes for the EB at pt when
// it led a slot on its RB, for EBTimes.
func (p *Pipeline) RecordCertify(pt block.Point, a forge.CertifyAttempt) { p.ebs.recordCertify(pt, a) }

// ClosureChanged returns a channel closed when the next body or closure is
// held here: a vote may be due.
func (p *Pipeline) ClosureChanged() <-chan struct{} { return p.ebs.closureChanged() }
