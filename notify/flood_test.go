package notify_test

import (
	"crypto/ed25519"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/notify"
)

// validVotes are the committee's votes on h's announcement, one per pool.
func (n *testNet) validVotes(t *testing.T, h *block.Header) []block.Vote {
	t.Helper()
	committee := n.validator.Committee()
	s, ok := block.SubjectOf(h)
	if !ok {
		t.Fatal("the header announces no EB")
	}
	var valid []block.Vote
	for i, p := range n.pools {
		seat, ok := committee.SeatOf(block.Bytes32(p.Issuer.Public().(ed25519.PublicKey)))
		if !ok {
			t.Fatalf("pool %d holds no seat", i)
		}
		valid = append(valid, block.Vote{RbHash: s.RbHash, VoterSeat: seat, Signature: p.Voting.Sign(committee.VoteMessage(s)).Bytes()})
	}
	return valid
}

// followerEnded waits for the follower's end and returns its error.
func followerEnded(t *testing.T, u *upstreamPeer) error {
	t.Helper()
	select {
	case err := <-u.followed:
		u.followed <- nil
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the follower did not end")
		return nil
	}
}

// A peer that sends the committee's valid votes for an RB a second time on
// its stream commits a violation: its relay sends each vote once, and the
// replay cost the node the decoding and lookups of every copy.
func TestRepeatedVotesAreAViolation(t *testing.T) {
	n := newTestNet(t, 3)
	committee := n.validator.Committee()
	r := n.relay(t, func(o *notify.Options) { o.ValidateVotes = committee.VerifyVoteBatch })
	u := follow(t, r)
	h := n.header(slotsPast-2, 0, newEB(t, 31).announcement(), 0)
	valid := n.validVotes(t, h)
	u.send(t, ann(h), &notify.MsgVotes{Votes: valid}, &notify.MsgVotes{Votes: valid[1:2]})
	if err := followerEnded(t, u); !errors.Is(err, notify.ErrRepeatedVote) {
		t.Fatalf("Follow: %v, want a repeated-vote violation", err)
	}
	if s := r.VoteStats(); s.Relayed != uint64(len(valid)) || s.Repeated != 1 || s.Verified != uint64(len(valid)) {
		t.Fatalf("vote stats %+v", s)
	}
}

// A batch of votes from seats that do not exist is refused whole before any
// signature is checked, and a batch with one forged signature costs one
// batch check, not one per vote: the sender is disconnected, nothing kept.
func TestForgedVoteBatchesCostOneCheck(t *testing.T) {
	n := newTestNet(t, 3)
	committee := n.validator.Committee()
	var checks, seatsRefused int
	r := n.relay(t, func(o *notify.Options) {
		o.ValidateVotes = func(votes []block.Vote, subjects []block.VoteSubject) error {
			err := committee.VerifyVoteBatch(votes, subjects)
			if errors.Is(err, consensus.ErrUnknownSeat) {
				seatsRefused++
			} else {
				checks++
			}
			return err
		}
	})
	h := n.header(slotsPast-2, 0, newEB(t, 31).announcement(), 0)
	rb := h.Hash()

	u := follow(t, r)
	forged := make([]block.Vote, notify.MaxVotesPerMessage)
	for i := range forged {
		forged[i] = block.Vote{RbHash: rb, VoterSeat: uint16(1000 + i)}
	}
	u.send(t, ann(h), &notify.MsgVotes{Votes: forged})
	if err := followerEnded(t, u); !errors.Is(err, notify.ErrInvalidVote) || !errors.Is(err, protocol.ErrDisconnect) {
		t.Fatalf("Follow: %v, want an invalid-vote violation that disconnects", err)
	}

	u = follow(t, r)
	bad := n.validVotes(t, h)
	bad[2].Signature = bad[0].Signature // another seat's
	u.send(t, ann(h), &notify.MsgVotes{Votes: bad})
	if err := followerEnded(t, u); !errors.Is(err, notify.ErrInvalidVote) {
		t.Fatalf("Follow: %v, want an invalid-vote violation", err)
	}
	if seatsRefused != 1 || checks != 1 {
		t.Fatalf("%d batches refused by their seats, %d checked; want one each", seatsRefused, checks)
	}
	if got := r.VotesFor(rb); len(got) != 0 {
		t.Fatalf("the vote table holds %d votes of refused batches", len(got))
	}
}

// Two peers deliver the same votes while the first batch is being
// verified: the second waits for that check instead of repeating it. If the
// first batch is refused (a forged vote beside copies of honest ones), the
// honest copies the second peer sent are verified after all: a forged
// batch cannot suppress them.
func TestEachVoteVerifiedOnce(t *testing.T) {
	for _, tt := range []struct {
		name        string
		forgedFirst bool
		want        []int // the sizes of the batches verified, in order
	}{
		{"first batch valid", false, []int{3}},
		{"first batch forged", true, []int{3, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := newTestNet(t, 3)
			committee := n.validator.Committee()
			started, release := make(chan struct{}), make(chan struct{})
			var verified []int
			r := n.relay(t, func(o *notify.Options) {
				o.ValidateVotes = func(votes []block.Vote, subjects []block.VoteSubject) error {
					verified = append(verified, len(votes))
					if len(verified) == 1 {
						close(started)
						<-release
					}
					return committee.VerifyVoteBatch(votes, subjects)
				}
			})
			h := n.header(slotsPast-2, 0, newEB(t, 31).announcement(), 0)
			if err := r.Announce(h); err != nil {
				t.Fatal(err)
			}
			valid := n.validVotes(t, h)
			first := append([]block.Vote{}, valid...)
			if tt.forgedFirst {
				first[0].Signature = first[1].Signature
			}
			firstDone := make(chan error, 1)
			go func() { _, err := r.Votes(first); firstDone <- err }()
			<-started
			secondDone := make(chan []block.Vote, 1)
			go func() { fresh, _ := r.Votes(valid[1:]); secondDone <- fresh }()
			// The second batch is in once the relay counted it; it must
			// not reach the check while the first is there.
			eventually(t, "the second batch arrives", func() bool { return r.VoteStats().Received == uint64(len(first)+len(valid)-1) })
			close(release)
			err, fresh := <-firstDone, <-secondDone
			if !slices.Equal(verified, tt.want) {
				t.Fatalf("batches verified %v, want %v", verified, tt.want)
			}
			if tt.forgedFirst && (err == nil || len(fresh) != len(valid)-1) {
				t.Fatalf("forged batch: %v; the honest copies relayed: %d of %d", err, len(fresh), len(valid)-1)
			}
			if !tt.forgedFirst && (err != nil || len(fresh) != 0 || len(r.VotesFor(h.Hash())) != len(valid)) {
				t.Fatalf("valid batch: %v; relayed again: %d; held %d", err, len(fresh), len(r.VotesFor(h.Hash())))
			}
		})
	}
}

// A peer may hand the relay's checks only so many votes a second: with the
// clock still, two full messages pass and the third is shed unchecked.
func TestVoteBudgetPerPeer(t *testing.T) {
	n := newTestNet(t, 1)
	now := time.Now()
	r := n.relay(t, func(o *notify.Options) {
		o.Now = func() time.Time { return now }
		o.VotesPerSecond = 10
	})
	u := follow(t, r)
	h := n.header(slotsPast-2, 0, newEB(t, 31).announcement(), 0)
	rb := h.Hash()
	msg := func(first int) protocol.Message {
		votes := make([]block.Vote, notify.MaxVotesPerMessage)
		for i := range votes {
			votes[i] = block.Vote{RbHash: rb, VoterSeat: uint16(first + i)}
		}
		return &notify.MsgVotes{Votes: votes}
	}
	u.send(t, ann(h), msg(0), msg(notify.MaxVotesPerMessage), msg(2*notify.MaxVotesPerMessage))
	eventually(t, "the third message is handled", func() bool {
		s := r.VoteStats()
		return s.Relayed+s.Shed == 3*notify.MaxVotesPerMessage
	})
	if s := r.VoteStats(); s.Relayed != 2*notify.MaxVotesPerMessage || s.Shed != notify.MaxVotesPerMessage {
		t.Fatalf("vote stats %+v: want two messages relayed, one shed", s)
	}
}
