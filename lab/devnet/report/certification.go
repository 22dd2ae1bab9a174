package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/load"
)

// notCertifiedOutcomes are what the report counts of the EBs the common
// chain did not certify (LeiosChain.NotCertified), in the order it tells
// them apart: still pending (no next block on the common chain yet), then
// why not, in the API's words (apitypes.Reasons) — the very strings a
// node's GET /api/ebs gives, so the report and the node speak of an EB
// alike, though the report reasons from every node's votes.
func notCertifiedOutcomes() []string {
	return append([]string{apitypes.FatePending}, apitypes.Reasons()...)
}

// LeiosChain is what the common chain (the blocks every node's chain
// holds, of the nodes whose chain was read at the end) shows of Leios.
type LeiosChain struct {
	NodesRead int `json:"nodesRead"`
	Blocks    int `json:"blocks"`
	// EBsAnnounced counts the EBs its blocks announced, EBsCertified those
	// its CertRBs certified. NotCertified counts, by reason (or pending), the
	// others and the EBs a node listed that the common chain did not
	// announce.
	EBsAnnounced int            `json:"ebsAnnounced"`
	EBsCertified int            `json:"ebsCertified"`
	NotCertified map[string]int `json:"notCertified"`
	// EquivocationsCertified counts the EBs certified although some node
	// refused to vote for them as equivocations: never more than 0.
	EquivocationsCertified int `json:"equivocationsCertified"`
	// TxsViaRBs are the txs its blocks carried, TxsViaEBs those of the
	// closures its CertRBs certified. Their rates are over Seconds, from
	// the system start to the start of the slot of its last block.
	TxsViaRBs     int     `json:"txsViaRBs"`
	TxsViaEBs     int     `json:"txsViaEBs"`
	Seconds       float64 `json:"seconds"`
	RBTxPerSecond float64 `json:"rbTxPerSecond"`
	EBTxPerSecond float64 `json:"ebTxPerSecond"`
	// Problems name the nodes whose chain was not read.
	Problems []string `json:"problems,omitempty"`
}

// ebPoint names an EB: the slot of the RB that announced it, and its hash.
type ebPoint struct {
	slot   uint64
	ebHash string
}

// certifyEBs says, for every EB the nodes' chains announced or a node
// listed (in ebs, with the nodes' votes; those only announced are added),
// whether the common chain certified it and, if not, why; and sums the
// chain up. names are the nodes' names, for the problems.
func certifyEBs(walks []load.ChainWalk, names []string, clock consensus.Clock, minCertGap int, ebs ebsByPoint) *LeiosChain {
	chains := load.Answered(walks)
	c := &LeiosChain{NodesRead: len(chains), NotCertified: map[string]int{}}
	for i, w := range walks {
		if w.Err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("%s's chain not read: %v", names[i], w.Err))
		}
	}
	common := load.CommonPrefix(chains)
	c.Blocks = len(common)
	onCommon := map[ebPoint]bool{}
	for i, b := range common {
		c.TxsViaRBs += len(b.Txs)
		c.TxsViaEBs += len(b.Closure)
		if b.Announces == nil {
			continue
		}
		p := ebPoint{b.Announces.Slot, b.Announces.EbHash}
		d := ebs.at(p, clock)
		d.RB = blockRef(b)
		if by, ok := certifiedBy(common, i); ok {
			d.CertifiedBy = by
			c.EBsCertified++
			if slices.Contains(slices.Collect(maps.Values(d.Votes)), apitypes.VoteEquivocation) {
				c.EquivocationsCertified++
			}
		} else {
			d.NotCertified = whyNotCertified(common, i, minCertGap, d.Votes)
		}
		onCommon[p] = true
		c.EBsAnnounced++
	}
	// The EBs the common chain did not announce were announced ahead of it
	// on some chain, or on none.
	ahead := map[ebPoint]bool{}
	for _, ch := range chains {
		for _, b := range ch.Blocks[len(common):] {
			if b.Announces != nil {
				p := ebPoint{b.Announces.Slot, b.Announces.EbHash}
				ebs.at(p, clock)
				ahead[p] = true
			}
		}
	}
	for p, d := range ebs {
		switch {
		case onCommon[p]:
		case ahead[p]:
			d.NotCertified = apitypes.FatePending
		default:
			d.NotCertified = apitypes.ReasonOffChain
		}
		if d.NotCertified != "" {
			c.NotCertified[d.NotCertified]++
		}
	}
	if len(common) > 0 {
		c.Seconds = clock.SlotStart(common[len(common)-1].Slot).Sub(clock.Start).Seconds()
	}
	if c.Seconds > 0 {
		c.RBTxPerSecond = float64(c.TxsViaRBs) / c.Seconds
		c.EBTxPerSecond = float64(c.TxsViaEBs) / c.Seconds
	}
	return c
}

// certifiedBy is the CertRB that certified the EB common[i] announced: the
// next block, if it certifies that EB.
func certifiedBy(common []apitypes.BlockTxs, i int) (*apitypes.TipStatus, bool) {
	if i+1 == len(common) {
		return nil, false
	}
	next := common[i+1]
	if next.Certifies == nil || *next.Certifies != *common[i].Announces {
		return nil, false
	}
	return blockRef(next), true
}

// whyNotCertified is why the EB common[i] announced was not certified, or
// apitypes.FatePending while no block follows it: only the next block may
// certify it, at least minCertGap slots later, and only with the votes of
// a quorum, which the nodes' vote outcomes (by node name) may explain.
// The report's own reasoning — it holds every node's vote, which no node
// does — in the reasons a node gives (leios' fate.go tells them apart in
// the same order).
func whyNotCertified(common []apitypes.BlockTxs, i, minCertGap int, votes map[string]string) string {
	outcome := func(o string) bool { return slices.Contains(slices.Collect(maps.Values(votes)), o) }
	switch {
	case i+1 == len(common):
		return apitypes.FatePending
	case outcome(apitypes.VoteEquivocation):
		return apitypes.ReasonEquivocation
	case common[i+1].Slot-common[i].Slot < uint64(minCertGap):
		return apitypes.ReasonTooEarly
	case outcome(apitypes.VoteInvalidClosure):
		return apitypes.ReasonInvalid
	case outcome(apitypes.VoteClosureIncomplete):
		return apitypes.ReasonIncomplete
	case outcome(apitypes.VoteTipAfterWindow):
		return apitypes.ReasonLateTip
	}
	return apitypes.ReasonNoQuorum
}

// blockRef names a block as the report does.
func blockRef(b apitypes.BlockTxs) *apitypes.TipStatus {
	return &apitypes.TipStatus{BlockNumber: b.Number, Slot: b.Slot, Hash: b.Hash}
}
