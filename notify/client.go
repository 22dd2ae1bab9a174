package notify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Follow is the client toward one peer: it keeps MaxInFlight requests
// outstanding and hands each notification, in the peer's order, to the
// relay and the node's sinks (Options.On*). A rule violation ends the
// session and counts against the peer; a third header for one (slot,
// issuer) disconnects the peer at once (ErrThirdHeader). Follow returns
// when ctx or the session ends, or with ErrQuiet when the peer has sent
// nothing for Options.KeepAlive.
func (r *Relay) Follow(ctx context.Context, from Peer, s *protocol.Session) error {
	f := newFollower(r, from)
	for range MaxInFlight {
		if err := s.Send(&MsgRequestNext{}); err != nil {
			return err
		}
	}
	for {
		msg, err := r.recv(ctx, s)
		if err != nil {
			return err
		}
		if err := f.handle(msg); err != nil {
			return s.Fail(err)
		}
		if err := s.Send(&MsgRequestNext{}); err != nil {
			return err
		}
	}
}

// recv waits for the next notification, at most KeepAlive: then the
// stream has been quiet long enough to be opened anew (ErrQuiet).
func (r *Relay) recv(ctx context.Context, s *protocol.Session) (protocol.Message, error) {
	quiet, cancel := context.WithTimeout(ctx, r.opts.KeepAlive)
	defer cancel()
	msg, err := s.Recv(quiet)
	if err != nil && ctx.Err() == nil && s.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, ErrQuiet
	}
	return msg, err
}

// Peer is the peer a client follows.
type Peer struct {
	ID peer.ID
	// Waste charges n of the peer's notifications that are of no use to
	// its budget (network.Peer.Waste): announcements, offers and votes
	// below the immutable tip. An error, past the budget, ends the
	// peer's streams as its violation. Nil charges nothing.
	Waste func(n int, what string) error
}

// uselessImmutable is Peer.Waste's what for a notification below the
// immutable tip.
const uselessImmutable = "immutable"

// follower is the client state of one stream.
type follower struct {
	r     *Relay
	from  peer.ID
	waste func(n int, what string) error // never nil
	// The state below holds no slot under floor.
	floor uint64
	// sent holds the distinct headers the peer sent per (slot, issuer):
	// an honest relay sends at most two.
	sent map[slotIssuer][]block.Hash
	// announced holds the points of the headers the peer sent and the relay
	// took (new or known): the points it may offer.
	announced map[block.Point]struct{}
	// refused holds the points of valid headers the peer sent that the
	// relay did not relay, because it holds two others for their (slot,
	// issuer): their offers are ignored; refusedRBs holds those headers'
	// hashes with their slots: their votes are ignored.
	refused    map[block.Point]struct{}
	refusedRBs map[block.Hash]uint64
	// votes holds the seats whose vote the peer sent, per RB: a relay sends
	// each once.
	votes map[block.Hash]*peerVotes
	// voteBudget is how many votes the peer may still have checked, refilled
	// at Options.VotesPerSecond up to two full messages since budgetAt.
	voteBudget float64
	budgetAt   time.Time
}

// peerVotes are the seats whose vote for one RB (of slot) a peer sent.
type peerVotes struct {
	slot  uint64
	seats map[uint16]struct{}
}

func newFollower(r *Relay, from Peer) *follower {
	waste := from.Waste
	if waste == nil {
		waste = func(int, string) error { return nil }
	}
	return &follower{
		r:          r,
		from:       from.ID,
		waste:      waste,
		sent:       make(map[slotIssuer][]block.Hash),
		announced:  make(map[block.Point]struct{}),
		refused:    make(map[block.Point]struct{}),
		refusedRBs: make(map[block.Hash]uint64),
		votes:      make(map[block.Hash]*peerVotes),
		voteBudget: 2 * MaxVotesPerMessage,
		budgetAt:   r.opts.Now(),
	}
}

func (f *follower) handle(msg protocol.Message) error {
	f.prune()
	opts := &f.r.opts
	switch m := msg.(type) {
	case *MsgBlockAnnouncement:
		return f.announcement(m.Header)
	case *MsgBlockOffer:
		ok, err := f.offered(m.Point)
		if ok && opts.OnBlockOffer != nil {
			opts.OnBlockOffer(f.from, m.Point, uint64(m.EbSize))
		}
		return err
	case *MsgBlockTxsOffer:
		ok, err := f.offered(m.Point)
		if ok && opts.OnBlockTxsOffer != nil {
			opts.OnBlockTxsOffer(f.from, m.Point)
		}
		return err
	case *MsgVotes:
		votes := slices.DeleteFunc(m.Votes, func(v block.Vote) bool {
			_, refused := f.refusedRBs[v.RbHash]
			return refused
		})
		if err := f.noRepeats(votes); err != nil {
			return err
		}
		votes = f.withinBudget(votes)
		fresh, err := f.r.votesFrom(f.from, votes)
		if len(fresh) > 0 && opts.OnVotes != nil {
			opts.OnVotes(f.from, fresh)
		}
		return err
	default:
		return fmt.Errorf("notify: client got %T", msg) // the Spec rules it out
	}
}

// announcement relays h and records its point as announced by the peer;
// the node hears of it if it is new.
//
// A third distinct header for one (slot, issuer) from this peer is its
// violation. A header the relay refuses because it already holds two
// others for that (slot, issuer) is not: an honest peer relays the first
// two it saw, which need not be ours. Such a header is still validated,
// and its point's offers are ignored. A header below the immutable tip is
// ignored: the peer may be behind us.
func (f *follower) announcement(h *block.Header) error {
	key := slotIssuer{h.Slot, h.IssuerVKey}
	sent := f.sent[key]
	if len(sent) >= 2 && !slices.Contains(sent, h.Hash()) {
		return fmt.Errorf("%w: slot %d issuer %x", ErrThirdHeader, h.Slot, h.IssuerVKey[:8])
	}
	fresh, err := f.r.announce(h)
	refused := errors.Is(err, ErrEquivocation)
	switch {
	case errors.Is(err, ErrImmutableSlot):
		// A peer behind us may still send it: not a violation, but it
		// costs the peer, so a flood of them is one.
		f.r.log.Debug("immutable announcement ignored", "peer", f.from, "point", h.Point())
		return f.immutable(1)
	case refused:
		if err := f.r.validate(h); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if !slices.Contains(sent, h.Hash()) {
		f.sent[key] = append(sent, h.Hash())
	}
	if refused {
		f.refusedRBs[h.Hash()] = h.Slot
	}
	if p, ok := pointOf(h); ok && refused {
		f.refused[p] = struct{}{}
	} else if ok {
		f.announced[p] = struct{}{}
	}
	if fresh && f.r.opts.OnAnnouncement != nil {
		f.r.opts.OnAnnouncement(f.from, h)
	}
	return nil
}

// offered checks an offer of p: ok if the peer announced p; ignored if its
// header was refused, or if p is below the immutable tip (its announcement
// may have been ignored as such: charged to the peer); otherwise a
// violation.
func (f *follower) offered(p block.Point) (ok bool, err error) {
	if _, ok := f.announced[p]; ok {
		return true, nil
	}
	if _, refused := f.refused[p]; refused {
		f.r.log.Debug("offer ignored: its header was refused", "peer", f.from, "point", p)
		return false, nil
	}
	if p.Slot < f.r.floor() {
		f.r.log.Debug("offer ignored: immutable", "peer", f.from, "point", p)
		return false, f.immutable(1)
	}
	return false, fmt.Errorf("%w: %s", ErrUnannouncedOffer, p)
}

// immutable charges the peer n notifications below the immutable tip.
func (f *follower) immutable(n int) error {
	return f.waste(n, uselessImmutable)
}

// noRepeats records the seats the peer sent votes for; a seat's vote for
// one RB sent twice on the stream is its violation. A vote for an RB the
// relay never accepted is left for Votes to refuse.
func (f *follower) noRepeats(votes []block.Vote) error {
	for _, v := range votes {
		pv := f.votes[v.RbHash]
		if pv == nil {
			slot, ok := f.r.rbSlot(v.RbHash)
			if !ok {
				continue
			}
			pv = &peerVotes{slot: slot, seats: make(map[uint16]struct{})}
			f.votes[v.RbHash] = pv
		}
		if _, repeated := pv.seats[v.VoterSeat]; repeated {
			f.r.stats.repeatedVotes.Add(1)
			return fmt.Errorf("%w: RB %s seat %d", ErrRepeatedVote, v.RbHash.Short(), v.VoterSeat)
		}
		pv.seats[v.VoterSeat] = struct{}{}
	}
	return nil
}

// withinBudget returns the votes the peer's verification budget covers,
// and sheds the rest.
func (f *follower) withinBudget(votes []block.Vote) []block.Vote {
	now := f.r.opts.Now()
	perSecond := float64(f.r.opts.VotesPerSecond)
	f.voteBudget = min(2*MaxVotesPerMessage, f.voteBudget+now.Sub(f.budgetAt).Seconds()*perSecond)
	f.budgetAt = now
	take := min(len(votes), int(f.voteBudget))
	f.voteBudget -= float64(take)
	if shed := len(votes) - take; shed > 0 {
		f.r.stats.shedVotes.Add(uint64(shed))
		f.r.log.Debug("votes past the peer's verification budget dropped", "peer", f.from, "count", shed)
	}
	return votes[:take]
}

// prune forgets the state below the relay's pruned slot.
func (f *follower) prune() {
	floor := f.r.pruned.Load()
	if floor <= f.floor {
		return
	}
	f.floor = floor
	maps.DeleteFunc(f.sent, func(k slotIssuer, _ []block.Hash) bool { return k.slot < floor })
	below := func(p block.Point, _ struct{}) bool { return p.Slot < floor }
	maps.DeleteFunc(f.announced, below)
	maps.DeleteFunc(f.refused, below)
	maps.DeleteFunc(f.refusedRBs, func(_ block.Hash, slot uint64) bool { return slot < floor })
	maps.DeleteFunc(f.votes, func(_ block.Hash, pv *peerVotes) bool { return pv.slot < floor })
}
