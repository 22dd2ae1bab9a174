package notify_test

import (
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/notify"
)

// A vote flood: a peer repeats the committee's valid votes for an RB, then
// sends a batch of votes from seats that do not exist. The repeats cost no
// memory (the table holds each seat once); the forged batch is a violation
// that disconnects the peer at once, and none of it is kept or relayed.
func TestVoteFloodIsBoundedAndDisconnected(t *testing.T) {
	n := newTestNet(t, 3)
	committee := n.validator.Committee()
	r := n.relay(t, func(o *notify.Options) {
		o.ValidateVotes = func(votes []block.Vote) error { return errors.Join(committee.VerifyVotes(votes)...) }
	})
	u := follow(t, r)
	e := newEB(t, 31)
	h := n.header(slotsPast-2, 0, e.announcement(), 0)
	rb := h.Hash()
	var valid []block.Vote
	for i, p := range n.pools {
		seat, ok := committee.SeatOf(block.Bytes32(p.Issuer.Public().(ed25519.PublicKey)))
		if !ok {
			t.Fatalf("pool %d holds no seat", i)
		}
		valid = append(valid, block.Vote{RbHash: rb, VoterSeat: seat, Signature: p.Voting.Sign(block.VoteMessage(rb)).Bytes()})
	}
	script := []protocol.Message{ann(h)}
	for range 50 {
		script = append(script, &notify.MsgVotes{Votes: valid})
	}
	forged := make([]block.Vote, notify.MaxVotesPerMessage)
	for i := range forged {
		forged[i] = block.Vote{RbHash: rb, VoterSeat: uint16(1000 + i)}
	}
	u.send(t, append(script, &notify.MsgVotes{Votes: forged})...)
	select {
	case err := <-u.followed:
		if !errors.Is(err, notify.ErrInvalidVote) || !errors.Is(err, protocol.ErrDisconnect) {
			t.Fatalf("Follow: %v, want an invalid-vote violation that disconnects", err)
		}
		u.followed <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("a vote flood was not refused")
	}
	if got := r.VotesFor(rb); len(got) != len(valid) {
		t.Fatalf("the vote table holds %d votes for the RB, want the %d seats", len(got), len(valid))
	}
	if s := r.VoteStats(); s.Relayed != uint64(len(valid)) || s.Invalid != notify.MaxVotesPerMessage {
		t.Fatalf("vote stats %+v", s)
	}
}
