package notify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// maxHeld bounds what a CIP client holds for a peer's announcement still
// to come: offers and votes of points its announce stream has not yet
// brought. An honest peer's streams are never that far apart; more is its
// violation.
const maxHeld = GrantSize * GrantsAhead

// FollowCIP is the client toward a peer that serves the CIP's streams:
// LeiosAnnounce, LeiosVotes and LeiosBlockNotify, each opened with open
// and kept supplied with tokens. What they carry goes to the same follower
// Follow uses, one for the three, so each rule of the prototype's stream
// holds across them: offers and votes are turned into the relay's terms
// (point and EB size, RB hash) from the headers the peer announced. The
// streams are not ordered against each other, so an offer or vote of a
// point the announce stream has not yet brought is held until it does (at
// most maxHeld, else ErrUnannouncedOffer or ErrUnknownRB). A stream quiet
// for Options.KeepAlive is opened anew on its own. FollowCIP returns when
// ctx ends or a stream fails; a violation on any ends all three.
func (r *Relay) FollowCIP(ctx context.Context, from Peer, open func(context.Context, *protocol.Spec) (*protocol.Session, error)) error {
	c := &cipFollower{f: newFollower(r, from), heads: make(map[block.Point][]*block.Header)}
	g, ctx := errgroup.WithContext(ctx)
	for _, stream := range []struct {
		spec   *protocol.Spec
		handle func([]protocol.Message) error
		reset  func()
	}{
		{AnnounceSpec(), handles(oneByOne(c.announcement)), func() {}},
		{BlockNotifySpec(), oneByOne(c.offer), func() {}},
		// Votes that arrived together are checked together: one batch
		// verification. A reopened stream starts with the server's recent
		// votes again: they are not repeats.
		{VotesSpec(), handles(c.votes), c.forgetVotesSent},
	} {
		g.Go(func() error {
			for {
				s, err := open(ctx, stream.spec)
				if err != nil {
					return err
				}
				err = r.followTokens(ctx, s, stream.handle)
				s.Close()
				if !errors.Is(err, ErrQuiet) {
					return err
				}
				stream.reset()
			}
		})
	}
	err := g.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.violation != nil {
		// The peer's violation, not a sibling stream's ending, which may
		// have returned first.
		return c.violation
	}
	return err
}

// followTokens keeps GrantsAhead grants of GrantSize outstanding on s and
// hands what arrives to handle: all that arrived while handle was busy, up
// to MaxVotesPerMessage, at once. It grants again as handle takes the
// messages, so what is granted and not yet handled stays within the
// grants. A handle error fails the session.
func (r *Relay) followTokens(ctx context.Context, s *protocol.Session, handle func([]protocol.Message) error) error {
	for range GrantsAhead {
		if err := s.Send(&MsgLeiosRequestNext{N: GrantSize}); err != nil {
			return err
		}
	}
	arrived := make(chan protocol.Message, GrantSize*GrantsAhead) // never full: no more is granted
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(arrived)
		for {
			msg, err := r.recv(ctx, s)
			if err != nil {
				return err
			}
			arrived <- msg
		}
	})
	g.Go(func() error {
		handled := 0
		for msg := range arrived {
			// What is queued stays queued until taken: this is the only
			// receiver.
			batch := []protocol.Message{msg}
			for range min(len(arrived), MaxVotesPerMessage-1) {
				batch = append(batch, <-arrived)
			}
			if err := handle(batch); err != nil {
				return s.Fail(err)
			}
			for range (handled+len(batch))/GrantSize - handled/GrantSize {
				if err := s.Send(&MsgLeiosRequestNext{N: GrantSize}); err != nil {
					return err
				}
			}
			handled += len(batch)
		}
		return nil
	})
	return g.Wait()
}

// cipFollower is the client state of one peer's three CIP streams.
type cipFollower struct {
	// mu serializes the three streams' handling, as the prototype's one
	// stream is: the follower's state and the callbacks see one order.
	mu    sync.Mutex
	f     *follower
	floor uint64 // heads and held hold no slot below it
	// heads are the headers the peer announced that the follower took, by
	// the point they announce.
	heads map[block.Point][]*block.Header
	// heldOffers and heldVotes wait for their point's announcement.
	heldOffers []cipOffer
	heldVotes  []LeiosVote
	// violation is the first one the peer committed on any stream.
	violation error
}

// cipOffer is a block offer (txs false) or block-txs offer of the CIP's.
type cipOffer struct {
	point  block.Point
	height uint64
	txs    bool
}

// handles is handle for the messages of a stream whose Spec allows the
// server M alone.
func handles[M protocol.Message](handle func([]M) error) func([]protocol.Message) error {
	return func(msgs []protocol.Message) error {
		typed := make([]M, len(msgs))
		for i, msg := range msgs {
			m, ok := msg.(M)
			if !ok {
				return fmt.Errorf("notify: client got %T", msg) // the Spec rules it out
			}
			typed[i] = m
		}
		return handle(typed)
	}
}

// oneByOne is handle for each message in turn.
func oneByOne[M any](handle func(M) error) func([]M) error {
	return func(msgs []M) error {
		for _, m := range msgs {
			if err := handle(m); err != nil {
				return err
			}
		}
		return nil
	}
}

func (c *cipFollower) announcement(m *MsgBlockAnnouncement) (err error) {
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer func() { unlock(err) }()
	if err := c.f.handle(m); err != nil {
		return err
	}
	p, ok := pointOf(m.Header)
	if !ok {
		return nil
	}
	if !slices.ContainsFunc(c.heads[p], func(h *block.Header) bool { return h.Hash() == m.Header.Hash() }) {
		c.heads[p] = append(c.heads[p], m.Header)
	}
	// What waited for this point, in the order it came.
	var offers []cipOffer
	c.heldOffers = slices.DeleteFunc(c.heldOffers, func(o cipOffer) bool {
		if o.point == p {
			offers = append(offers, o)
			return true
		}
		return false
	})
	var votes []LeiosVote
	c.heldVotes = slices.DeleteFunc(c.heldVotes, func(v LeiosVote) bool {
		if (block.Point{Slot: v.Slot, Hash: v.EbHash}) == p {
			votes = append(votes, v)
			return true
		}
		return false
	})
	for _, o := range offers {
		if err := c.offerLocked(o); err != nil {
			return err
		}
	}
	return c.votesLocked(votes)
}

func (c *cipFollower) offer(msg protocol.Message) (err error) {
	var o cipOffer
	switch m := msg.(type) {
	case *MsgLeiosBlockOffer:
		o = cipOffer{point: m.point(), height: m.BlockHeight}
	case *MsgLeiosBlockTxsOffer:
		o = cipOffer{point: m.point(), height: m.BlockHeight, txs: true}
	default:
		return fmt.Errorf("notify: block-notify client got %T", msg) // the Spec rules it out
	}
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer func() { unlock(err) }()
	return c.offerLocked(o)
}

// offerLocked hands o to the follower as the prototype's offer, with the
// EB size its announcing header gives; holds it if the peer has not
// announced its point yet. mu is held.
func (c *cipFollower) offerLocked(o cipOffer) error {
	heads, announced := c.heads[o.point]
	if !announced {
		if o.point.Slot < c.f.r.floor() {
			return c.f.immutable(1) // the peer may be behind us: as Follow ignores it
		}
		if len(c.heldOffers) >= maxHeld {
			return fmt.Errorf("%w: %s, and %d other offers wait for their announcement", ErrUnannouncedOffer, o.point, maxHeld)
		}
		c.heldOffers = append(c.heldOffers, o)
		return nil
	}
	i := slices.IndexFunc(heads, func(h *block.Header) bool { return h.BlockNumber == o.height })
	if i < 0 {
		return fmt.Errorf("%w: %s at height %d, announced at another", ErrUnannouncedOffer, o.point, o.height)
	}
	if o.txs {
		return c.f.handle(&MsgBlockTxsOffer{Point: o.point})
	}
	// Announced sizes are bounded by the header's validation (≤ 512 KiB).
	return c.f.handle(&MsgBlockOffer{Point: o.point, EbSize: uint32(heads[i].Announcement.EbSize)})
}

func (c *cipFollower) votes(msgs []*MsgLeiosVote) (err error) {
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer func() { unlock(err) }()
	votes := make([]LeiosVote, len(msgs))
	for i, m := range msgs {
		votes[i] = m.Vote
	}
	return c.votesLocked(votes)
}

// votesLocked hands votes to the follower, together, as votes for the RBs
// that announced their EBs at their slots — any accepted header that did,
// from any peer — and holds those with none yet. Should two RBs of one
// slot announce the same EB, such a vote is tried for each in the order
// they were accepted, alone. mu is held.
func (c *cipFollower) votesLocked(votes []LeiosVote) error {
	var batch []block.Vote
	for _, v := range votes {
		p := block.Point{Slot: v.Slot, Hash: v.EbHash}
		switch rbs := c.f.r.announcersOf(p); {
		case len(rbs) == 1:
			batch = append(batch, block.Vote{RbHash: rbs[0], VoterSeat: v.VoterID, Signature: v.Signature})
		case len(rbs) > 1:
			if err := c.ambiguousVote(v, rbs); err != nil {
				return err
			}
		case v.Slot < c.f.r.floor():
			if err := c.f.immutable(1); err != nil {
				return err
			}
		case len(c.heldVotes) >= maxHeld:
			return fmt.Errorf("%w: slot %d EB %s, and %d other votes wait for their announcement", ErrUnknownRB, v.Slot, v.EbHash.Short(), maxHeld)
		default:
			c.heldVotes = append(c.heldVotes, v)
		}
	}
	if len(batch) == 0 {
		return nil
	}
	return c.f.handle(&MsgVotes{Votes: batch})
}

// ambiguousVote tries v for each of rbs in turn, until one takes it —
// first the one this relay already holds or checks the same vote for, so
// each copy from another peer costs no check that fails. mu is held.
func (c *cipFollower) ambiguousVote(v LeiosVote, rbs []block.Hash) error {
	if rb, ok := c.f.r.voteFor(rbs, v.VoterID, v.Signature); ok {
		rbs = []block.Hash{rb}
	}
	var err error
	for _, rb := range rbs {
		err = c.f.handle(&MsgVotes{Votes: []block.Vote{{RbHash: rb, VoterSeat: v.VoterID, Signature: v.Signature}}})
		if !errors.Is(err, ErrInvalidVote) {
			return err
		}
	}
	return err
}

// forgetVotesSent starts a reopened votes stream afresh: the seats the peer
// sent on the old one are not repeats on the new.
func (c *cipFollower) forgetVotesSent() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.f.votes)
}

// lock takes mu for one message's handling, first dropping what fell below
// the relay's pruned slot, and returns its release, which is given the
// handling's error. Once one stream's handling found the peer's violation,
// the others handle nothing more — they end as its consequence, not as
// offences of their own, though they were already at work on messages of
// their own (it would count twice).
func (c *cipFollower) lock() (unlock func(error), err error) {
	c.mu.Lock()
	if c.violation != nil {
		c.mu.Unlock()
		return nil, protocol.ClosedBy(c.violation)
	}
	c.prune()
	return func(err error) {
		if protocol.IsViolation(err) {
			c.violation = err
		}
		c.mu.Unlock()
	}, nil
}

// prune drops heads and held items below the relay's pruned slot. mu is
// held.
func (c *cipFollower) prune() {
	floor := c.f.r.pruned.Load()
	if floor <= c.floor {
		return
	}
	c.floor = floor
	maps.DeleteFunc(c.heads, func(p block.Point, _ []*block.Header) bool { return p.Slot < floor })
	c.heldOffers = slices.DeleteFunc(c.heldOffers, func(o cipOffer) bool { return o.point.Slot < floor })
	c.heldVotes = slices.DeleteFunc(c.heldVotes, func(v LeiosVote) bool { return v.Slot < floor })
}
