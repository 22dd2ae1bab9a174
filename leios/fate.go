package leios

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
)

// What became of an EB on this node's selected chain (EBFate.Fate).
const (
	FateCertified    = "certified"     // the next block certifies it
	FatePending      = "pending"       // its RB is the tip, or not yet on the chain
	FateNotCertified = "not certified" // see Reason
)

// Why an EB was not certified (EBFate.Reason), from what this node saw.
// Only the block right after the announcing RB may certify its EB. When
// this node forged that block, what it found then (CertifyAttempt) is the
// reason; otherwise the reason is read from this node's own view of the EB.
const (
	// The announcing RB is not on this node's selected chain: a fork that
	// lost, or a block this node never adopted.
	ReasonOffChain = "announcing RB not on the chain"
	// Its pool announced two EBs in the slot: nodes vote on neither.
	ReasonEquivocation = "equivocating announcement"
	// The next block came within the certification gap (MinCertGap slots).
	ReasonTooEarly = "next RB came too early"
	// The closure does not apply on the ledger after the RB (this node's
	// check before its vote).
	ReasonInvalid = "invalid closure"
	// This node never held the whole closure in the voting window, or,
	// when it forged the next block, did not hold it then.
	ReasonIncomplete = "closure incomplete here"
	// The next block's leader did not hold votes that certify the EB (this
	// node's own attempt says so when it led; otherwise it is what is left).
	ReasonNoQuorum = "no quorum at the next leader"
)

// EBFate is what became of an EB on this node's selected chain, worked
// out when asked, so a rollback changes it back.
type EBFate struct {
	Fate   string `json:"fate"`
	Reason string `json:"reason,omitempty"`
	// CertifiedBy is the CertRB, when certified.
	CertifiedBy *BlockRef `json:"certifiedBy,omitempty"`
}

// BlockRef names a block of the chain.
type BlockRef struct {
	Number uint64 `json:"number"`
	Slot   uint64 `json:"slot"`
	Hash   string `json:"hash"`
}

// settleFates sets each EB's Fate from the selected chain: the blocks
// from the tip back to the oldest EB's slot, read by header.
func (p *Pipeline) settleFates(ebs []EBTimes) {
	if p.chain == nil || len(ebs) == 0 {
		return
	}
	oldest := ebs[0].Slot
	for _, e := range ebs {
		oldest = min(oldest, e.Slot)
	}
	// Each block of that stretch by hash, with the header after it.
	type onChain struct {
		header, next *block.Header
	}
	byHash := map[block.Hash]onChain{}
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
		if h.Slot < oldest {
			break
		}
		next = h
	}
	gap := uint64(p.opts.Validator.Leios().MinCertGap)
	for i := range ebs {
		e := &ebs[i]
		rb, ok := byHash[e.rb]
		switch {
		case !ok && (e.Slot >= tip.Point.Slot || !walked):
			e.Fate = &EBFate{Fate: FatePending}
		case !ok:
			e.Fate = &EBFate{Fate: FateNotCertified, Reason: ReasonOffChain}
		case rb.next == nil:
			e.Fate = &EBFate{Fate: FatePending}
		default:
			e.Fate = fateAfter(e, rb.header, rb.next, gap)
		}
	}
}

// fateAfter is the fate of e, announced by rb, once next follows rb on
// the chain.
func fateAfter(e *EBTimes, rb, next *block.Header, gap uint64) *EBFate {
	if pt, ok := consensus.CertifiedByHeader(next, rb); ok && pt.Hash.String() == e.EbHash {
		return &EBFate{Fate: FateCertified, CertifiedBy: &BlockRef{Number: next.BlockNumber, Slot: next.Slot, Hash: next.Hash().String()}}
	}
	return &EBFate{Fate: FateNotCertified, Reason: whyNot(e, rb, next, gap)}
}

// whyNot is why next did not certify e: what this node found when it
// forged next, if it did, else what its own view of e tells.
func whyNot(e *EBTimes, rb, next *block.Header, gap uint64) string {
	if a := e.Certify; a != nil && a.Slot == next.Slot {
		switch a.Outcome {
		case forge.CertifyEquivocation:
			return ReasonEquivocation
		case forge.CertifyTooEarly:
			return ReasonTooEarly
		case forge.CertifyInvalid:
			return ReasonInvalid
		case forge.CertifyNoClosure:
			return ReasonIncomplete
		case forge.CertifyNoQuorum, forge.CertifyNotCertifying:
			return ReasonNoQuorum
		}
		// It certified, yet another block of that slot is on the chain.
	}
	switch {
	case e.Vote == forge.VoteEquivocation:
		return ReasonEquivocation
	case next.Slot-rb.Slot < gap:
		return ReasonTooEarly
	case e.Vote == forge.VoteInvalidClosure:
		return ReasonInvalid
	case e.Closure == nil || e.Vote == forge.VoteClosureIncomplete:
		return ReasonIncomplete
	}
	return ReasonNoQuorum
}
