package notify_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/notify"
)

// TestAnnounceRules runs announcements through one relay in order and
// checks each verdict, then that a served peer got exactly the accepted
// headers, once each, in order.
func TestAnnounceRules(t *testing.T) {
	n := newTestNet(t, 3)
	other := newTestNet(t, 4) // its pool 3 is not in n's genesis
	immutable := uint64(100)
	r := n.relay(t, func(o *notify.Options) { o.ImmutableSlot = func() uint64 { return immutable } })
	tp := newTap(t, r)

	ann := &block.Announcement{EbHash: fillHash(0xe1), EbSize: 300}
	first := n.header(200, 0, ann, 0)
	second := n.header(200, 0, ann, 1)
	forged := tampered(t, n.header(201, 1, nil, 0))
	wrongSlotVRF := n.header(202, 1, nil, 0)
	wrongSlotVRF.Slot = 203 // the proof is for 202; re-sign so only the VRF is wrong
	wrongSlotVRF = block.NewHeader(wrongSlotVRF.HeaderBody, n.pools[1].Issuer)

	var relayed []*block.Header
	for _, tc := range []struct {
		name string
		h    *block.Header
		want error // nil: accepted (or a duplicate)
		also error // the validator's reason, wrapped
		new  bool  // relayed now
	}{
		{"valid, announces an EB", first, nil, nil, true},
		{"duplicate", first, nil, nil, false},
		{"second for the (slot, issuer): equivocation is relayed", second, nil, nil, true},
		{"third for the (slot, issuer)", n.header(200, 0, ann, 2), notify.ErrEquivocation, nil, false},
		{"duplicate of the second", second, nil, nil, false},
		{"another issuer in the same slot", n.header(200, 1, ann, 0), nil, nil, true},
		{"no EB announced", n.header(150, 2, nil, 0), nil, nil, true},
		{"at the immutable slot", n.header(100, 2, nil, 0), nil, nil, true},
		{"below the immutable slot", n.header(99, 2, nil, 0), notify.ErrImmutableSlot, nil, false},
		{"in the future", n.header(slotsPast+10, 2, nil, 0), notify.ErrFutureSlot, nil, false},
		{"bad signature", forged, notify.ErrInvalidHeader, block.ErrBadSignature, false},
		{"unknown issuer", other.header(204, 3, nil, 0), notify.ErrInvalidHeader, consensus.ErrUnknownIssuer, false},
		{"VRF proof for another slot", wrongSlotVRF, notify.ErrInvalidHeader, consensus.ErrBadVRFProof, false},
	} {
		err := r.Announce(tc.h)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Fatalf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if tc.also != nil && !errors.Is(err, tc.also) {
			t.Fatalf("%s: err %v does not carry the validator's reason %v", tc.name, err, tc.also)
		}
		if tc.new {
			relayed = append(relayed, tc.h)
		}
	}

	// Which are relayed, not in what order: announced before the tap's
	// stream is served, they come as its catch-up does, by slot.
	msgs := tp.waitFor(t, len(relayed))
	msgs = tp.quiet(t, len(relayed))
	want := map[block.Hash]bool{}
	for _, h := range relayed {
		want[h.Hash()] = true
	}
	for i, m := range msgs {
		a, ok := m.(*notify.MsgBlockAnnouncement)
		if !ok || !want[a.Header.Hash()] {
			t.Fatalf("notification %d is %s, not one of those relayed:%s", i, label(m), describe(msgs))
		}
		delete(want, a.Header.Hash())
	}
}

// TestPruneForgetsAndRefuses: after Prune(s), announcements below s are
// refused, and the (slot, issuer) counts at or above s survive.
func TestPruneForgetsAndRefuses(t *testing.T) {
	n := newTestNet(t, 1)
	r := n.relay(t)
	for _, slot := range []uint64{10, 20} {
		for v := range byte(2) {
			if err := r.Announce(n.header(slot, 0, nil, v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Prune(15)
	r.Prune(12) // the floor never goes back
	if err := r.Announce(n.header(10, 0, nil, 0)); !errors.Is(err, notify.ErrImmutableSlot) {
		t.Fatalf("pruned slot: %v", err)
	}
	if err := r.Announce(n.header(14, 0, nil, 0)); !errors.Is(err, notify.ErrImmutableSlot) {
		t.Fatalf("below the pruned slot: %v", err)
	}
	if err := r.Announce(n.header(20, 0, nil, 2)); !errors.Is(err, notify.ErrEquivocation) {
		t.Fatalf("slot 20 forgot its two headers: %v", err)
	}
	// A new peer's catch-up holds only what survived.
	msgs := newTap(t, r).waitFor(t, 2)
	for _, m := range msgs {
		if a := m.(*notify.MsgBlockAnnouncement); a.Header.Slot != 20 {
			t.Fatalf("catch-up after prune holds %s", label(m))
		}
	}
}

func TestVotes(t *testing.T) {
	n := newTestNet(t, 1)
	bad := errors.New("bad signature")
	r := n.relay(t, func(o *notify.Options) {
		o.ValidateVotes = func(votes []block.Vote, _ []block.VoteSubject) error {
			for _, v := range votes {
				if v.Signature[0] == 0xba {
					return bad
				}
			}
			return nil
		}
		o.VoteWindow = notify.VoteWindow{From: 1, Through: 12}
	})
	tp := newTap(t, r)
	e := newEB(t, 21)
	recent, other, old := n.header(slotsPast-3, 0, e.announcement(), 0), n.header(slotsPast-2, 0, e.announcement(), 0), n.header(slotsPast-100, 0, e.announcement(), 0)
	for _, h := range []*block.Header{recent, other, old} {
		if err := r.Announce(h); err != nil {
			t.Fatal(err)
		}
	}
	tp.waitFor(t, 3)
	tp.clear()
	rb := recent.Hash()
	vote := func(seat uint16) block.Vote { return block.Vote{RbHash: rb, VoterSeat: seat} }

	fresh, err := r.Votes([]block.Vote{vote(1), vote(2), vote(1)})
	if err != nil || len(fresh) != 2 {
		t.Fatalf("first batch: %d fresh, %v", len(fresh), err)
	}
	if fresh, err = r.Votes([]block.Vote{vote(2), vote(1)}); err != nil || len(fresh) != 0 {
		t.Fatalf("repeated votes: %d fresh, %v", len(fresh), err)
	}
	invalid := vote(3)
	invalid.Signature[0] = 0xba
	if fresh, err = r.Votes([]block.Vote{vote(4), invalid}); !errors.Is(err, notify.ErrInvalidVote) || !errors.Is(err, bad) || fresh != nil {
		t.Fatalf("batch with an invalid vote: %d fresh, %v", len(fresh), err)
	}
	if fresh, err = r.Votes([]block.Vote{{RbHash: fillHash(0x77), VoterSeat: 1}}); !errors.Is(err, notify.ErrUnknownRB) || fresh != nil {
		t.Fatalf("a vote for an RB never announced: %d fresh, %v", len(fresh), err)
	}
	if fresh, err = r.Votes([]block.Vote{{RbHash: old.Hash(), VoterSeat: 1}}); err != nil || fresh != nil {
		t.Fatalf("a vote past its window: %d fresh, %v", len(fresh), err)
	}
	if got := r.VotesFor(rb); len(got) != 2 || got[0].VoterSeat != 1 || got[1].VoterSeat != 2 {
		t.Fatalf("votes for the RB: %v", got)
	}
	if s := r.VoteStats(); s.Relayed != 2 || s.OutsideWindow != 1 || s.Invalid != 3 {
		t.Fatalf("vote stats %+v", s)
	}
	// Another RB's votes at the same seat are distinct; 1,100 of them go out
	// in batches of at most MaxVotesPerMessage.
	var many []block.Vote
	for seat := range uint16(1100) {
		many = append(many, block.Vote{RbHash: other.Hash(), VoterSeat: seat})
	}
	if fresh, err = r.Votes(many); err != nil || len(fresh) != 1100 {
		t.Fatalf("large batch: %d fresh, %v", len(fresh), err)
	}

	got := map[[2]uint64]int{}
	total := 0
	eventually(t, "1102 votes", func() bool {
		total = 0
		for _, m := range tp.messages() {
			total += len(m.(*notify.MsgVotes).Votes)
		}
		return total >= 1102
	})
	for _, m := range tp.quiet(t, len(tp.messages())) {
		vs := m.(*notify.MsgVotes).Votes
		if len(vs) == 0 || len(vs) > notify.MaxVotesPerMessage {
			t.Fatalf("vote batch of %d", len(vs))
		}
		for _, v := range vs {
			got[[2]uint64{uint64(v.RbHash[0]), uint64(v.VoterSeat)}]++
		}
	}
	if total != 1102 || len(got) != 1102 {
		t.Fatalf("relayed %d votes, %d distinct; want 1102", total, len(got))
	}
	if _, ok := got[[2]uint64{uint64(rb[0]), 4}]; ok {
		t.Fatal("a vote of a batch with an invalid vote was relayed")
	}
}

// A vote for an RB that announced no EB is refused as one for an RB never
// announced: nobody votes on nothing, and a vote's message needs the EB.
// A batch refused so gives up the checks it had claimed for its other
// votes: another peer's copy of one is then checked and relayed, not kept
// waiting for a check that never comes.
func TestVotesRefusedBatchReleasesItsChecks(t *testing.T) {
	n := newTestNet(t, 1)
	r := n.relay(t)
	announcing, plain := n.header(slotsPast-3, 0, newEB(t, 22).announcement(), 0), n.header(slotsPast-2, 0, nil, 0)
	for _, h := range []*block.Header{announcing, plain} {
		if err := r.Announce(h); err != nil {
			t.Fatal(err)
		}
	}
	good := block.Vote{RbHash: announcing.Hash(), VoterSeat: 1}
	if fresh, err := r.Votes([]block.Vote{good, {RbHash: plain.Hash(), VoterSeat: 1}}); !errors.Is(err, notify.ErrUnknownRB) || fresh != nil {
		t.Fatalf("a batch with a vote for an RB announcing nothing: %d fresh, %v", len(fresh), err)
	}
	done := make(chan error, 1)
	go func() {
		fresh, err := r.Votes([]block.Vote{good})
		if err == nil && len(fresh) != 1 {
			err = fmt.Errorf("%d fresh", len(fresh))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the vote again, from another peer: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the vote again, from another peer, waits for the refused batch's check")
	}
}

// TestSlowPeerIsDropped: a peer that never asks lets its FIFO fill up and is
// dropped, without holding up the relay or other peers.
func TestSlowPeerIsDropped(t *testing.T) {
	n := newTestNet(t, 1)
	r := n.relay(t, func(o *notify.Options) { o.MaxQueue = 3 })
	_, server, _, sv := pair(t) // its client never sends a request
	served := make(chan error, 1)
	go func() { served <- r.Serve(server.Context(), server) }()
	tp := newTap(t, r)
	// Serve registers the slow peer in its own time, and what it finds then
	// is its catch-up, which is never cut short: announce until it is
	// dropped, at most a few headers after it registered.
	var err error
	announced := 0
	for slot := uint64(1); err == nil; slot++ {
		if slot > 100 {
			t.Fatal("the slow peer was never dropped")
		}
		if err := r.Announce(n.header(slot, 0, nil, 0)); err != nil {
			t.Fatal(err)
		}
		announced++
		select {
		case err = <-served:
		case <-time.After(5 * time.Millisecond):
		}
	}
	if !errors.Is(err, notify.ErrSlowPeer) {
		t.Fatalf("slow peer's Serve: %v", err)
	}
	if errs := sv.List(); len(errs) != 0 {
		t.Fatalf("a slow peer counted as a violation: %v", errs)
	}
	tp.waitFor(t, announced)
}

func TestAnnounceNewReportsFirstTimeOnly(t *testing.T) {
	n := newTestNet(t, 1)
	r := n.relay(t)
	h := n.header(7, 0, nil, 0)
	for i, want := range []bool{true, false} {
		fresh, err := r.AnnounceNew(h)
		if err != nil || fresh != want {
			t.Fatalf("announcement %d: fresh %v (%v), want %v", i+1, fresh, err, want)
		}
	}
}

// Two headers for one slot and issuer are an equivocation: their EBs get no
// votes. One is not.
func TestEquivocated(t *testing.T) {
	n := newTestNet(t, 1)
	r := n.relay(t)
	e := newEB(t, 41)
	first := n.header(50, 0, e.announcement(), 0)
	if err := r.Announce(first); err != nil {
		t.Fatal(err)
	}
	if r.Equivocated(50, first.IssuerVKey) {
		t.Fatal("one header is no equivocation")
	}
	if err := r.Announce(n.header(50, 0, e.announcement(), 1)); err != nil {
		t.Fatal(err)
	}
	if !r.Equivocated(50, first.IssuerVKey) || r.Equivocated(51, first.IssuerVKey) {
		t.Fatal("two headers for one slot and issuer not seen as an equivocation")
	}
	if got := r.VoteStats().Equivocations; got != 1 {
		t.Fatalf("%d equivocations counted, want 1", got)
	}
}
