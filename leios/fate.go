package leios

import (
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
)

// An EB's fate is told in the API's words (package apitypes: Fate*,
// Reason*), the same the devnet's report uses for the whole network. Only
// the block right after the announcing RB may certify its EB. When this
// node forged that block, what it found then (CertifyAttempt) is the
// reason; otherwise the reason is read from this node's own view of the
// EB.

// settleFates sets each EB's Fate from the selected chain: the blocks
// from the tip back to the oldest EB's slot, read by header.
func (p *Pipeline) settleFates(ebs []ebEntry) {
	if p.chain == nil || len(ebs) == 0 {
		return
	}
	oldest := ebs[0].Slot
	for _, e := range ebs {
		oldest = min(oldest, e.Slot)
	}
	// Each block of that stretch by hash, with the header after it, and
	// by the EB it announced: two leaders of one slot holding the same
	// txs announce the same EB, and this node may have met the one that
	// lost first.
	type onChain struct {
		header, next *block.Header
	}
	type announced struct {
		slot   uint64
		ebHash string
	}
	byHash := map[block.Hash]onChain{}
	byEB := map[announced]onChain{}
	tip := p.chain.Tip()
	var next *block.Header
	walked := true // back to the oldest EB's slot, or to the first block
	for n := tip.BlockNumber; n >= 1; n-- {
		h, err := p.chain.HeaderByNumber(n)
		if err != nil {
			walked = false // rolled back meanwhile: an RB not met may yet be on the chain
			break
		}
		byHash[h.Hash()] = onChain{h, next}
		if a := h.Announcement; a != nil {
			byEB[announced{h.Slot, a.EbHash.String()}] = onChain{h, next}
		}
		if h.Slot < oldest {
			break
		}
		next = h
	}
	gap := uint64(p.opts.Validator.Leios().MinCertGap)
	for i := range ebs {
		e := &ebs[i]
		rb, ok := byHash[e.rb]
		if !ok {
			rb, ok = byEB[announced{e.Slot, e.EbHash}]
		}
		switch {
		case !ok && (e.Slot >= tip.Point.Slot || !walked):
			e.Fate = &apitypes.EBFate{Fate: apitypes.FatePending}
		case !ok:
			e.Fate = &apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonOffChain}
		case rb.next == nil:
			e.Fate = &apitypes.EBFate{Fate: apitypes.FatePending}
		default:
			e.Fate = fateAfter(&e.EBTimes, rb.header, rb.next, gap)
		}
	}
}

// fateAfter is the fate of e, announced by rb, once next follows rb on
// the chain.
func fateAfter(e *apitypes.EBTimes, rb, next *block.Header, gap uint64) *apitypes.EBFate {
	if pt, ok := consensus.CertifiedByHeader(next, rb); ok && pt.Hash.String() == e.EbHash {
		return &apitypes.EBFate{Fate: apitypes.FateCertified, CertifiedBy: &apitypes.BlockRef{Number: next.BlockNumber, Slot: next.Slot, Hash: next.Hash().String()}}
	}
	return &apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: whyNot(e, rb, next, gap)}
}

// whyNot is why next did not certify e: what this node found when it
// forged next, if it did, else what its own view of e tells.
func whyNot(e *apitypes.EBTimes, rb, next *block.Header, gap uint64) string {
	if a := e.Certify; a != nil && a.Slot == next.Slot {
		switch a.Outcome {
		case forge.CertifyEquivocation:
			return apitypes.ReasonEquivocation
		case forge.CertifyTooEarly:
			return apitypes.ReasonTooEarly
		case forge.CertifyInvalid:
			return apitypes.ReasonInvalid
		case forge.CertifyNoClosure:
			return apitypes.ReasonIncomplete
		case forge.CertifyNoQuorum, forge.CertifyNotCertifying:
			return apitypes.ReasonNoQuorum
		}
		// It certified, yet another block of that slot is on the chain.
	}
	switch {
	case e.Vote == forge.VoteEquivocation:
		return apitypes.ReasonEquivocation
	case next.Slot-rb.Slot < gap:
		return apitypes.ReasonTooEarly
	case e.Vote == forge.VoteInvalidClosure:
		return apitypes.ReasonInvalid
	case e.Closure == nil || e.Vote == forge.VoteClosureIncomplete:
		return apitypes.ReasonIncomplete
	case e.Vote == forge.VoteTipAfterWindow:
		return apitypes.ReasonLateTip
	}
	return apitypes.ReasonNoQuorum
}
