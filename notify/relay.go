package notify

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Relay is the node's one LeiosNotify relay: it validates announcements
// and votes, deduplicates them, and feeds every served peer's FIFO with
// them and with the offers of the LeiosDB, never an offer before its
// announcement. Build it with NewRelay; the node's LeiosDB follower feeds
// it the LeiosDB's events (Offer), and NewService puts it on the host.
type Relay struct {
	opts Options
	log  *slog.Logger

	// pruned is the slot below which all state is dropped and new state is
	// refused. It only grows. Written under mu; read without it.
	pruned atomic.Uint64

	skewSlots uint64 // MaxClockSkew in slots, rounded up
	stats     voteStats

	// mu guards every field below and every peerQueue's items. It is never
	// held while validating, calling an Options func, or
	// doing I/O: every operation under it is a few map and slice updates, so
	// no peer, store or validator ever makes another wait.
	mu           sync.Mutex
	headers      map[block.Hash]*block.Header // accepted headers
	recent       []*block.Header              // the same, in (slot, acceptance) order
	bySlotIssuer map[slotIssuer][]block.Hash  // at most two each
	points       map[block.Point][]block.Hash // the accepted headers announcing each, in acceptance order
	offers       map[block.Point]*offerState  // held by the LeiosDB; sent once announced
	votes        map[block.Hash]*rbVotes      // for accepted headers only
	verifying    map[voteKey]chan struct{}    // votes some batch is verifying now; closed when done
	queues       map[*peerQueue]struct{}      // served peers
}

// voteKey names a vote whole, its signature included: a forged vote for a
// seat must not shadow the seat's real one while it is being verified.
type voteKey struct {
	rb   block.Hash
	seat uint16
	sig  block.Bytes48
}

type slotIssuer struct {
	slot   uint64
	issuer block.Bytes32
}

// offerState is what the LeiosDB holds of a point.
type offerState struct {
	ebSize  uint64
	body    bool // BodyStored
	closure bool // ClosureComplete
}

// rbVotes are the votes relayed for one accepted RB header. With a
// validator that knows the committee, a table holds at most seats × the
// headers of the volatile window.
type rbVotes struct {
	slot   uint64 // the RB's
	bySeat map[uint16]heldVote
}

// heldVote is a relayed vote and the peers known to hold it: the one it
// came from and those that sent it since. The relay sends it to none of
// them: a vote sent back to where it came from costs the link and the
// peer's relay a message for nothing.
type heldVote struct {
	vote    block.Vote
	holders []peer.ID // distinct; at most one per peer that sent it
}

// heldBy reports whether p is known to hold the vote. The empty ID is the
// node itself, or a peer it cannot name: never a holder.
func (hv *heldVote) heldBy(p peer.ID) bool { return p != "" && slices.Contains(hv.holders, p) }

// heldAlsoBy notes that p holds the vote.
func (hv *heldVote) heldAlsoBy(p peer.ID) {
	if p != "" && !slices.Contains(hv.holders, p) {
		hv.holders = append(hv.holders, p)
	}
}

// NewRelay builds a relay.
func NewRelay(opts Options) (*Relay, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	skew := (opts.MaxClockSkew + opts.Clock.SlotLength - 1) / opts.Clock.SlotLength
	return &Relay{
		opts:         opts,
		skewSlots:    uint64(skew),
		log:          opts.Logger.With("component", "notify"),
		headers:      make(map[block.Hash]*block.Header),
		bySlotIssuer: make(map[slotIssuer][]block.Hash),
		points:       make(map[block.Point][]block.Hash),
		offers:       make(map[block.Point]*offerState),
		votes:        make(map[block.Hash]*rbVotes),
		verifying:    make(map[voteKey]chan struct{}),
		queues:       make(map[*peerQueue]struct{}),
	}, nil
}

// pointOf is the EB point a header announces, if it announces one.
func pointOf(h *block.Header) (block.Point, bool) {
	if h.Announcement == nil {
		return block.Point{}, false
	}
	return block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash}, true
}

// floor is the least slot an announcement may have: the immutable tip's,
// and never below what was pruned (the equivocation state of older slots is
// gone, so accepting them again would relay any number).
func (r *Relay) floor() uint64 { return max(r.pruned.Load(), r.opts.ImmutableSlot()) }

// Announce relays an RB header to every peer: the node's own forged
// headers, those chain sync brings, and (through the client) those peers
// announce. A header already relayed is accepted again without effect.
// It fails with ErrImmutableSlot, ErrFutureSlot, ErrInvalidHeader (wrapping
// the validator's reason) or ErrEquivocation (a third header for its
// (slot, issuer)); then it is not relayed.
func (r *Relay) Announce(h *block.Header) error {
	_, err := r.announce(h)
	return err
}

// AnnounceNew is Announce that also reports whether the header was new to
// the relay, so a caller acts on each header once however many paths (the
// forge, chain sync from every peer) bring it.
func (r *Relay) AnnounceNew(h *block.Header) (fresh bool, err error) { return r.announce(h) }

// announce is Announce; fresh reports a header new to the relay.
func (r *Relay) announce(h *block.Header) (fresh bool, err error) {
	if floor := r.floor(); h.Slot < floor {
		return false, fmt.Errorf("%w: slot %d, immutable tip at slot %d", ErrImmutableSlot, h.Slot, floor)
	}
	// Cheap checks first, so duplicates and a third header cost no
	// signature or VRF check.
	if known, err := r.check(h); known || err != nil {
		return false, err
	}
	if err := r.validate(h); err != nil {
		return false, err
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	// Validation ran unlocked: the state may have moved meanwhile.
	if h.Slot < r.pruned.Load() {
		return false, fmt.Errorf("%w: slot %d pruned", ErrImmutableSlot, h.Slot)
	}
	if known, err := r.checkLocked(h); known || err != nil {
		return false, err
	}
	r.accept(h)
	return true, nil
}

// validate checks h itself, whatever the relay's state: not from the
// future, and valid (ValidateHeader).
func (r *Relay) validate(h *block.Header) error {
	if ahead := r.opts.Clock.SlotStart(h.Slot).Sub(r.opts.Now()); ahead > r.opts.MaxClockSkew {
		return fmt.Errorf("%w: slot %d starts in %v", ErrFutureSlot, h.Slot, ahead)
	}
	if err := r.opts.ValidateHeader(h); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalidHeader, h.Point(), err)
	}
	return nil
}

// check reports whether h was already accepted, or is a third header for
// its (slot, issuer).
func (r *Relay) check(h *block.Header) (known bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkLocked(h)
}

// checkLocked is check; mu is held.
func (r *Relay) checkLocked(h *block.Header) (known bool, err error) {
	if _, ok := r.headers[h.Hash()]; ok {
		return true, nil
	}
	if others := r.bySlotIssuer[slotIssuer{h.Slot, h.IssuerVKey}]; len(others) >= 2 {
		return false, fmt.Errorf("%w: slot %d issuer %x: %s after %s and %s", ErrEquivocation,
			h.Slot, h.IssuerVKey[:8], h.Hash().Short(), others[0].Short(), others[1].Short())
	}
	return false, nil
}

// accept records a validated header and queues it to every peer, followed
// by the offers of its point that were waiting for it. mu is held.
func (r *Relay) accept(h *block.Header) {
	r.headers[h.Hash()] = h
	i := sort.Search(len(r.recent), func(i int) bool { return r.recent[i].Slot > h.Slot })
	r.recent = slices.Insert(r.recent, i, h)
	key := slotIssuer{h.Slot, h.IssuerVKey}
	r.bySlotIssuer[key] = append(r.bySlotIssuer[key], h.Hash())
	if len(r.bySlotIssuer[key]) == 2 {
		r.stats.equivocations.Add(1)
		r.log.Warn("equivocation: second header for one slot and issuer", "slot", h.Slot, "issuer", fmt.Sprintf("%x", h.IssuerVKey[:8]))
	}

	r.broadcast(&MsgBlockAnnouncement{Header: h})
	p, ok := pointOf(h)
	if !ok {
		return
	}
	r.points[p] = append(r.points[p], h.Hash())
	if len(r.points[p]) > 1 {
		return // its offers already followed the first header announcing it
	}
	if st := r.offers[p]; st != nil {
		for _, m := range offerMessages(p, st) {
			r.broadcast(m)
		}
	}
}

// offerMessages are the offers of a point the LeiosDB holds, block offer
// first.
func offerMessages(p block.Point, st *offerState) []protocol.Message {
	var msgs []protocol.Message
	if st.body {
		// The LeiosDB holds only bodies within the EB limits (≤ 512 KiB), so
		// the size fits the codec's Word32.
		msgs = append(msgs, &MsgBlockOffer{Point: p, EbSize: uint32(st.ebSize)})
	}
	if st.closure {
		msgs = append(msgs, &MsgBlockTxsOffer{Point: p})
	}
	return msgs
}

// Votes relays the votes not relayed before, keyed by (rb_hash, seat), to
// every peer, and returns them. A vote for an RB whose header was never
// accepted here, or that announced no EB, is refused with ErrUnknownRB — a
// peer's relay sends the header first, and nobody votes on nothing; one
// outside Options.VoteWindow is not relayed (late, or early by more than
// the clock skew), nor is it an error. If Options.ValidateVotes refuses the new
// votes — each checked on its RB's announcement, the subject the header
// gives — none is relayed and the error wraps ErrInvalidVote.
//
// Each vote is verified once: a vote already relayed or repeated in the
// batch is dropped before the check, and one that another peer's batch is
// verifying right now waits for that check instead of repeating it — and is
// verified here only if that batch was refused (a forged batch must not
// suppress an honest copy). VoteStats counts the votes verified against
// those received.
func (r *Relay) Votes(votes []block.Vote) ([]block.Vote, error) {
	return r.votesFrom("", votes)
}

// votesFrom is Votes for votes that peer from sent (the empty ID: this
// node's own): none is relayed back to from, nor to another peer that sent
// it too.
func (r *Relay) votesFrom(from peer.ID, votes []block.Vote) ([]block.Vote, error) {
	r.stats.receivedVotes.Add(uint64(len(votes)))
	return r.relayVotes(from, votes)
}

func (r *Relay) relayVotes(from peer.ID, votes []block.Vote) ([]block.Vote, error) {
	now := r.opts.Clock.SlotAt(r.opts.Now())
	r.mu.Lock()
	unseen := make([]block.Vote, 0, len(votes))
	subjects := make([]block.VoteSubject, 0, len(votes)) // of unseen
	var elsewhere []block.Vote                           // being verified by another batch
	var awaited []chan struct{}
	outside := 0
	// refuse gives up the whole batch, and the checks it claimed: a batch
	// waiting for one of them must not wait for ever.
	refuse := func(err error) ([]block.Vote, error) {
		r.mu.Unlock()
		r.doneVerifying(unseen)
		r.stats.invalidVotes.Add(1)
		return nil, err
	}
	for _, v := range votes {
		h, known := r.headers[v.RbHash]
		if !known {
			return refuse(fmt.Errorf("%w: rb %s seat %d", ErrUnknownRB, v.RbHash.Short(), v.VoterSeat))
		}
		s, announces := block.SubjectOf(h)
		if !announces {
			return refuse(fmt.Errorf("%w: rb %s announced no EB, seat %d", ErrUnknownRB, v.RbHash.Short(), v.VoterSeat))
		}
		if !r.opts.VoteWindow.admits(h.Slot, now, r.skewSlots) {
			outside++
			continue
		}
		if rv := r.votes[v.RbHash]; rv != nil {
			if held, dup := rv.bySeat[v.VoterSeat]; dup {
				if held.vote.Signature == v.Signature {
					held.heldAlsoBy(from)
					rv.bySeat[v.VoterSeat] = held
				}
				continue
			}
		}
		key := voteKey{v.RbHash, v.VoterSeat, v.Signature}
		if done, inFlight := r.verifying[key]; inFlight {
			// Another batch's, or a repeat within this one (whose check
			// is over by the time it is awaited).
			elsewhere, awaited = append(elsewhere, v), append(awaited, done)
			continue
		}
		r.verifying[key] = make(chan struct{})
		unseen, subjects = append(unseen, v), append(subjects, s)
	}
	r.mu.Unlock()
	fresh, err := r.verifyAndRelay(from, unseen, subjects, outside)
	if err != nil || len(elsewhere) == 0 {
		return fresh, err
	}
	for _, done := range awaited {
		<-done
	}
	more, err := r.relayVotes(from, elsewhere) // relayed by now unless refused there
	return append(fresh, more...), err
}

// verifyAndRelay checks the votes this batch claimed for verification, each
// on its subject, and relays those still new to every peer but from.
func (r *Relay) verifyAndRelay(from peer.ID, unseen []block.Vote, subjects []block.VoteSubject, outside int) ([]block.Vote, error) {
	defer r.doneVerifying(unseen)
	if outside > 0 {
		r.stats.outsideWindow.Add(uint64(outside))
		r.log.Debug("votes outside their window not relayed", "count", outside)
	}
	if len(unseen) == 0 {
		return nil, nil
	}
	if r.opts.ValidateVotes != nil {
		r.stats.verifiedVotes.Add(uint64(len(unseen)))
		if err := r.opts.ValidateVotes(unseen, subjects); err != nil {
			r.stats.invalidVotes.Add(uint64(len(unseen)))
			return nil, fmt.Errorf("%w: %w", ErrInvalidVote, err)
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	var fresh []block.Vote
	for _, v := range unseen {
		h, ok := r.headers[v.RbHash]
		if !ok {
			continue // pruned meanwhile
		}
		rv := r.votes[v.RbHash]
		if rv == nil {
			rv = &rbVotes{slot: h.Slot, bySeat: make(map[uint16]heldVote)}
			r.votes[v.RbHash] = rv
		}
		if _, dup := rv.bySeat[v.VoterSeat]; dup {
			continue // the seat's vote with another signature, relayed meanwhile
		}
		held := heldVote{vote: v}
		held.heldAlsoBy(from)
		rv.bySeat[v.VoterSeat] = held
		fresh = append(fresh, v)
	}
	for q := range r.queues {
		if from == "" || q.peer != from {
			r.pushVotes(q, fresh)
		}
	}
	// After the pushes: whoever reads the count sees what they queued.
	r.stats.relayedVotes.Add(uint64(len(fresh)))
	return fresh, nil
}

// doneVerifying ends the verification of votes and wakes the batches that
// waited for it.
func (r *Relay) doneVerifying(votes []block.Vote) {
	if len(votes) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range votes {
		key := voteKey{v.RbHash, v.VoterSeat, v.Signature}
		close(r.verifying[key])
		delete(r.verifying, key)
	}
}

// rbSlot returns the slot of an accepted header.
func (r *Relay) rbSlot(rb block.Hash) (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.headers[rb]
	if !ok {
		return 0, false
	}
	return h.Slot, true
}

// VotesFor returns the votes relayed for the RB rbHash, by seat.
func (r *Relay) VotesFor(rbHash block.Hash) []block.Vote {
	r.mu.Lock()
	defer r.mu.Unlock()
	rv := r.votes[rbHash]
	if rv == nil {
		return nil
	}
	return rv.sorted()
}

// Equivocated reports whether two headers were accepted for this slot and
// issuer: an equivocation, whose EBs get no votes.
func (r *Relay) Equivocated(slot uint64, issuer block.Bytes32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bySlotIssuer[slotIssuer{slot, issuer}]) >= 2
}

func (rv *rbVotes) sorted() []block.Vote { return rv.sortedFor("") }

// sortedFor lists the votes p is not known to hold, by seat.
func (rv *rbVotes) sortedFor(p peer.ID) []block.Vote {
	out := make([]block.Vote, 0, len(rv.bySeat))
	for _, held := range rv.bySeat {
		if !held.heldBy(p) {
			out = append(out, held.vote)
		}
	}
	slices.SortFunc(out, func(a, b block.Vote) int { return cmp.Compare(a.VoterSeat, b.VoterSeat) })
	return out
}

// Prune drops everything below slot — announcements, the (slot, issuer)
// counts, offers, votes — and from then on refuses announcements below it.
// The node calls it as the immutable tip advances.
func (r *Relay) Prune(slot uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slot <= r.pruned.Load() {
		return
	}
	r.pruned.Store(slot)
	n := sort.Search(len(r.recent), func(i int) bool { return r.recent[i].Slot >= slot })
	for _, h := range r.recent[:n] {
		delete(r.headers, h.Hash())
		delete(r.bySlotIssuer, slotIssuer{h.Slot, h.IssuerVKey})
		if p, ok := pointOf(h); ok {
			delete(r.points, p)
		}
	}
	r.recent = slices.Delete(r.recent, 0, n)
	// The maps below hold only the volatile window; a sweep per advance of
	// the immutable tip is cheap.
	for p := range r.offers {
		if p.Slot < slot {
			delete(r.offers, p)
		}
	}
	for h, rv := range r.votes {
		if rv.slot < slot {
			delete(r.votes, h)
		}
	}
}

// sortedVotes lists the remembered votes p is not known to hold by (RB
// slot, RB hash, seat), for a deterministic catch-up. mu is held.
func (r *Relay) sortedVotes(p peer.ID) []block.Vote {
	hashes := make([]block.Hash, 0, len(r.votes))
	for h := range r.votes {
		hashes = append(hashes, h)
	}
	slices.SortFunc(hashes, func(a, b block.Hash) int {
		return cmp.Or(cmp.Compare(r.votes[a].slot, r.votes[b].slot), slices.Compare(a[:], b[:]))
	})
	var votes []block.Vote
	for _, h := range hashes {
		votes = append(votes, r.votes[h].sortedFor(p)...)
	}
	return votes
}

// heightLocked is the block height of the first accepted header that
// announced p. mu is held.
func (r *Relay) heightLocked(p block.Point) (uint64, bool) {
	rbs := r.points[p]
	if len(rbs) == 0 {
		return 0, false
	}
	return r.headers[rbs[0]].BlockNumber, true
}

// announcersOf are the accepted headers that announce p, first accepted
// first: the RBs a CIP vote naming p's slot and EB may be for.
func (r *Relay) announcersOf(p block.Point) []block.Hash {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.points[p])
}

// voteFor is the one of rbs for which this relay holds, or is checking,
// seat's vote with signature sig.
func (r *Relay) voteFor(rbs []block.Hash, seat uint16, sig block.Bytes48) (block.Hash, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rb := range rbs {
		if rv := r.votes[rb]; rv != nil {
			if held, ok := rv.bySeat[seat]; ok && held.vote.Signature == sig {
				return rb, true
			}
		}
		if _, checking := r.verifying[voteKey{rb, seat, sig}]; checking {
			return rb, true
		}
	}
	return block.Hash{}, false
}
