package consensus

import (
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
)

// VerifyVote checks that the vote is for s's RB, that its seat exists and
// that its signature is the seat's on the network's vote message for s
// (VoteMessage). Whether the RB is known and inside its voting window is
// for the caller, who knows the chain.
func (c *Committee) VerifyVote(v *block.Vote, s block.VoteSubject) error {
	item, err := c.signedVote(v, s)
	if err != nil {
		return err
	}
	if !item.Key.Verify(item.Message, item.Signature) {
		return fmt.Errorf("%w: seat %d, %s", ErrBadVoteSignature, v.VoterSeat, s)
	}
	return nil
}

// VerifyVotes checks votes as VerifyVote does, vote i on subjects[i], their
// signatures in one randomized batch. It returns nil when every vote
// verifies; otherwise one error per vote, nil for those that verify (when
// the batch fails, the votes are checked one by one to tell which).
func (c *Committee) VerifyVotes(votes []block.Vote, subjects []block.VoteSubject) []error {
	batch, index, errs := c.signedVotes(votes, subjects)
	if bls.VerifyBatch(batch) {
		return errs
	}
	if errs == nil {
		errs = make([]error, len(votes))
	}
	for k, item := range batch {
		if !item.Key.Verify(item.Message, item.Signature) {
			i := index[k]
			errs[i] = fmt.Errorf("%w: seat %d, %s", ErrBadVoteSignature, votes[i].VoterSeat, subjects[i])
		}
	}
	return errs
}

// VerifyVoteBatch checks votes as one, vote i on subjects[i]: every vote
// must be for its subject's RB, every seat exist and every signature
// decode before any is verified, then all signatures are verified in one
// randomized batch, which costs well under one verification per vote. A
// batch that fails is refused whole, without finding which vote failed:
// what a peer sends, it pays for, and a forged batch costs the node one
// batch check, not one check per vote.
func (c *Committee) VerifyVoteBatch(votes []block.Vote, subjects []block.VoteSubject) error {
	batch, _, errs := c.signedVotes(votes, subjects)
	if errs != nil {
		return errors.Join(errs...)
	}
	if !bls.VerifyBatch(batch) {
		return fmt.Errorf("%w: a batch of %d votes", ErrBadVoteSignature, len(votes))
	}
	return nil
}

// signedVotes looks up the seat, decodes the signature and makes the
// message of each vote: the batch of those that did, the vote of each
// batch entry, and an error per vote (nil if none failed).
func (c *Committee) signedVotes(votes []block.Vote, subjects []block.VoteSubject) (batch []bls.SignedMessage, index []int, errs []error) {
	if len(subjects) != len(votes) {
		// A caller's mistake, not a peer's: every vote fails.
		errs = make([]error, len(votes))
		for i := range errs {
			errs[i] = fmt.Errorf("consensus: %d subjects for %d votes", len(subjects), len(votes))
		}
		return nil, nil, errs
	}
	batch, index = make([]bls.SignedMessage, 0, len(votes)), make([]int, 0, len(votes))
	for i := range votes {
		item, err := c.signedVote(&votes[i], subjects[i])
		if err != nil {
			if errs == nil {
				errs = make([]error, len(votes))
			}
			errs[i] = err
			continue
		}
		batch, index = append(batch, item), append(index, i)
	}
	return batch, index, errs
}

// signedVote checks the vote is for s's RB, looks up its seat and decodes
// its signature.
func (c *Committee) signedVote(v *block.Vote, s block.VoteSubject) (bls.SignedMessage, error) {
	if v.RbHash != s.RbHash {
		return bls.SignedMessage{}, fmt.Errorf("%w: seat %d votes for RB %s, not %s", ErrOtherRB, v.VoterSeat, v.RbHash.Short(), s.RbHash.Short())
	}
	seat, ok := c.Seat(v.VoterSeat)
	if !ok {
		return bls.SignedMessage{}, fmt.Errorf("%w: seat %d of %d", ErrUnknownSeat, v.VoterSeat, len(c.seats))
	}
	sig, err := bls.SignatureFromBytes(v.Signature[:])
	if err != nil {
		return bls.SignedMessage{}, fmt.Errorf("%w: seat %d: %w", ErrBadVoteSignature, v.VoterSeat, err)
	}
	return bls.SignedMessage{Key: seat.VotingKey, Message: c.VoteMessage(s), Signature: sig}, nil
}

// Voter casts the votes of one seat.
type Voter struct {
	seat     uint16
	key      *bls.SecretKey
	encoding block.Encoding
}

// NewVoter returns the voter of the pool with this issuer key, signing with
// key. It refuses a pool that holds no seat and a key that is not the
// seat's, so a misconfigured node finds out at start, not from its votes
// being dropped.
func (c *Committee) NewVoter(issuer block.Bytes32, key *bls.SecretKey) (*Voter, error) {
	seat, ok := c.SeatOf(issuer)
	if !ok {
		return nil, fmt.Errorf("%w: issuer %x", ErrNotOnCommittee, issuer[:8])
	}
	if !key.PublicKey().Equal(c.seats[seat].VotingKey) {
		return nil, fmt.Errorf("%w: pool %s, seat %d", ErrWrongVotingKey, c.seats[seat].Pool, seat)
	}
	return &Voter{seat: seat, key: key, encoding: c.encoding}, nil
}

// Seat is the voter's seat.
func (v *Voter) Seat() uint16 { return v.seat }

// Vote returns the voter's vote on s: its signature on the network's vote
// message for s, filed under s's RB.
func (v *Voter) Vote(s block.VoteSubject) block.Vote {
	return block.Vote{RbHash: s.RbHash, VoterSeat: v.seat, Signature: v.key.Sign(v.encoding.VoteMessage(s)).Bytes()}
}
