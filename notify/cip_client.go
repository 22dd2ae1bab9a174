package notify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
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
func (r *Relay) FollowCIP(ctx context.Context, from peer.ID, open func(context.Context, *protocol.Spec) (*protocol.Session, error)) error {
	c := &cipFollower{f: newFollower(r, from), heads: make(map[block.Point][]*block.Header)}
	g, ctx := errgroup.WithContext(ctx)
	for _, stream := range []struct {
		spec   *protocol.Spec
		handle func(protocol.Message) error
		reset  func()
	}{
		{AnnounceSpec(), handles(c.announcement), func() {}},
		{BlockNotifySpec(), c.offer, func() {}},
		// A reopened stream starts with the server's recent votes again:
		// they are not repeats.
		{VotesSpec(), handles(c.vote), c.forgetVotesSent},
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
	return g.Wait()
}

// followTokens keeps GrantsAhead grants of GrantSize outstanding on s and
// hands each message to handle; a handle error fails the session.
func (r *Relay) followTokens(ctx context.Context, s *protocol.Session, handle func(protocol.Message) error) error {
	for range GrantsAhead {
		if err := s.Send(&MsgLeiosRequestNext{N: GrantSize}); err != nil {
			return err
		}
	}
	for received := 1; ; received++ {
		msg, err := r.recv(ctx, s)
		if err != nil {
			return err
		}
		if err := handle(msg); err != nil {
			return s.Fail(err)
		}
		if received%GrantSize == 0 {
			if err := s.Send(&MsgLeiosRequestNext{N: GrantSize}); err != nil {
				return err
			}
		}
	}
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
}

// cipOffer is a block offer (txs false) or block-txs offer of the CIP's.
type cipOffer struct {
	point  block.Point
	height uint64
	txs    bool
}

// handles is handle for any message of the stream, whose Spec allows the
// server M alone.
func handles[M protocol.Message](handle func(M) error) func(protocol.Message) error {
	return func(msg protocol.Message) error {
		m, ok := msg.(M)
		if !ok {
			return fmt.Errorf("notify: client got %T", msg) // the Spec rules it out
		}
		return handle(m)
	}
}

func (c *cipFollower) announcement(m *MsgBlockAnnouncement) error {
	unlock := c.lock()
	defer unlock()
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
	for _, v := range votes {
		if err := c.voteLocked(v); err != nil {
			return err
		}
	}
	return nil
}

func (c *cipFollower) offer(msg protocol.Message) error {
	var o cipOffer
	switch m := msg.(type) {
	case *MsgLeiosBlockOffer:
		o = cipOffer{point: m.point(), height: m.BlockHeight}
	case *MsgLeiosBlockTxsOffer:
		o = cipOffer{point: m.point(), height: m.BlockHeight, txs: true}
	default:
		return fmt.Errorf("notify: block-notify client got %T", msg) // the Spec rules it out
	}
	unlock := c.lock()
	defer unlock()
	return c.offerLocked(o)
}

// offerLocked hands o to the follower as the prototype's offer, with the
// EB size its announcing header gives; holds it if the peer has not
// announced its point yet. mu is held.
func (c *cipFollower) offerLocked(o cipOffer) error {
	heads, announced := c.heads[o.point]
	if !announced {
		if o.point.Slot < c.f.r.floor() {
			return nil // the peer may be behind us: as Follow ignores it
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

func (c *cipFollower) vote(m *MsgLeiosVote) error {
	unlock := c.lock()
	defer unlock()
	return c.voteLocked(m.Vote)
}

// voteLocked hands v to the follower as a vote for the RB that announced
// its EB at its slot — any accepted header that did, from any peer; holds
// it if there is none yet. Should two RBs of one slot announce the same EB,
// the vote is tried for each in the order they were accepted. mu is held.
func (c *cipFollower) voteLocked(v LeiosVote) error {
	p := block.Point{Slot: v.Slot, Hash: v.EbHash}
	rbs := c.f.r.announcersOf(p)
	if len(rbs) == 0 {
		if v.Slot < c.f.r.floor() {
			return nil
		}
		if len(c.heldVotes) >= maxHeld {
			return fmt.Errorf("%w: slot %d EB %s, and %d other votes wait for their announcement", ErrUnknownRB, v.Slot, v.EbHash.Short(), maxHeld)
		}
		c.heldVotes = append(c.heldVotes, v)
		return nil
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
// the relay's pruned slot, and returns its release.
func (c *cipFollower) lock() (unlock func()) {
	c.mu.Lock()
	c.prune()
	return c.mu.Unlock
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
