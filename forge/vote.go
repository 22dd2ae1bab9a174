package forge

import (
	"context"
	"fmt"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/internal/simtrace"
)

// What became of this node's vote on an EB (Leios.RecordVote): the
// API's words (package apitypes), which the node's clients read.
const (
	VoteCast              = apitypes.VoteCast
	VoteClosureIncomplete = apitypes.VoteClosureIncomplete
	VoteInvalidClosure    = apitypes.VoteInvalidClosure
	VoteEquivocation      = apitypes.VoteEquivocation
	VoteTipReplaced       = apitypes.VoteTipReplaced
	VoteTipAfterWindow    = apitypes.VoteTipAfterWindow
)

// ballot is the vote on the EB of one tip RB.
type ballot struct {
	rb      block.Hash
	issuer  block.Bytes32 // the RB's
	point   block.Point
	from    uint64 // the window, in slots
	through uint64
	opened  uint64 // the slot it became the tip's ballot
	reason  string // why no vote yet
	done    bool   // outcome recorded
}

// VoteSlot votes, if this pool holds a committee seat, on the EB the
// selected tip announces: once its whole closure is held and applies in
// order on the ledger after that RB, from LHdr to LHdr+LVote slots after
// the RB, while it is the tip, and never for an equivocating announcement.
// Run calls it every slot and whenever a closure completes or the tip
// changes; the check of the closure and the outcome are recorded with
// Leios.RecordValidated and Leios.RecordVote.
func (f *Forger) VoteSlot(slot uint64) {
	if f.opts.Voter == nil {
		return
	}
	view, tip, release, err := f.opts.Ledger.TipUTxO()
	if err != nil {
		f.opts.Logger.Warn("vote: reading the tip's ledger", "err", err)
		return
	}
	defer release()
	if tip.Point.IsOrigin() {
		return // nothing announced yet
	}
	b := &f.ballot
	if tip.Point.Hash != b.rb {
		if !b.done && !b.rb.IsZero() {
			f.record(b, VoteTipReplaced)
		}
		*b = ballot{rb: tip.Point.Hash, opened: slot}
		rb, err := f.opts.Ledger.Block(tip.Point.Hash)
		if err != nil || rb.Header.Announcement == nil {
			b.done = true // nothing to vote on
			return
		}
		lp := f.opts.Validator.Leios()
		h := rb.Header
		b.point, b.issuer = block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash}, h.IssuerVKey
		b.from = h.Slot + uint64(lp.LHdr)
		b.through = b.from + uint64(lp.LVote)
	}
	if b.done || slot < b.from {
		return
	}
	// Checked once the header diffusion period (LHdr) has passed, at every
	// try: a second header for the slot may come after the RB itself, and
	// a vote cast cannot be taken back.
	if f.opts.Leios.Equivocated(b.point.Slot, b.issuer) {
		f.record(b, VoteEquivocation)
		return
	}
	if slot > b.through {
		if b.opened > b.through {
			// Not a closure missed: the RB itself came too late to vote on
			// (a slot battle that resolved late, a block adopted late).
			b.reason = VoteTipAfterWindow
		}
		f.record(b, b.reason)
		return
	}
	closure, held, err := f.opts.Leios.ClosureTxs(b.point)
	if err != nil || !held {
		b.reason = VoteClosureIncomplete
		return
	}
	// Checked at the earliest slot a CertRB could apply the closure.
	at := max(slot, b.point.Slot+uint64(f.opts.Validator.Leios().MinCertGap))
	// Labelled as the check it is; the vote loop's label comes back after.
	cpuwork.Do(cpuwork.Context(context.Background(), cpuwork.Voting), cpuwork.ClosureValidation, func(context.Context) {
		_, err = f.applyClosure(view, at, closure)
	})
	if err != nil {
		f.opts.Logger.Warn("vote: refusing an EB whose closure does not apply", "eb", b.point, "err", err)
		f.record(b, VoteInvalidClosure)
		return
	}
	f.opts.Leios.RecordValidated(b.point, f.opts.Now())
	vote := f.opts.Voter.Vote(block.VoteSubject{RbHash: b.rb, Slot: b.point.Slot, EbHash: b.point.Hash})
	// Written before the vote is relayed, which sends it.
	if t := f.opts.Trace; t.On() {
		t.Emit(simtrace.VTBundleGenerated{ID: VoteID(vote), Slot: slot, Producer: t.Node(), SizeBytes: voteSize(vote),
			Votes: map[string]int{vote.RbHash.String(): 1}})
	}
	if err := f.opts.Leios.Vote(vote); err != nil {
		f.opts.Logger.Error("vote: relaying our own vote", "eb", b.point, "err", err)
		return
	}
	f.record(b, VoteCast)
}

// record notes b's outcome, once.
func (f *Forger) record(b *ballot, outcome string) {
	if outcome == "" {
		outcome = VoteClosureIncomplete
	}
	b.done = true
	f.opts.Leios.RecordVote(b.point, outcome, f.opts.Now())
}

// VoteID names a vote in traces: "<EB id>-<seat>", the EB named by its
// announcing RB's hash (simtrace), as every node that relays the vote can
// tell, whichever protocol carried it.
func VoteID(v block.Vote) string { return fmt.Sprintf("%s-%d", v.RbHash, v.VoterSeat) }

// voteSize is a vote's size on the wire: its hash, seat and signature.
func voteSize(v block.Vote) int { return len(v.RbHash) + 2 + len(v.Signature) }
