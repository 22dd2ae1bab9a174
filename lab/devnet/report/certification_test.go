package report

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/load"
)

// TestCertifyEBs: over scripted chains (a common chain whose EBs meet every
// fate, then a fork) and EB lists with the nodes' vote outcomes, every EB
// gets its CertRB or the reason it has none, and the chain its counts and
// rates.
func TestCertifyEBs(t *testing.T) {
	clock := consensus.Clock{Start: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), SlotLength: 100 * time.Millisecond}
	const minCertGap = 10
	txs := func(from, n int) []string {
		var hashes []string
		for i := range n {
			hashes = append(hashes, fmt.Sprintf("%064x", from+i))
		}
		return hashes
	}
	announcing := func(number, slot uint64, eb string) apitypes.BlockTxs {
		return apitypes.BlockTxs{Number: number, Slot: slot, Hash: fmt.Sprintf("rb%d-%s", number, eb), Announces: &apitypes.EBRef{Slot: slot, EbHash: eb}}
	}
	// The common chain: each block announces an EB, and the next one
	// certifies it or not.
	b1 := announcing(1, 10, "a")
	b1.Txs = txs(0, 5)
	b2 := announcing(2, 25, "b") // certifies a
	b2.Certifies, b2.Closure = b1.Announces, txs(100, 40)
	b3 := announcing(3, 30, "c") // 5 slots after b2: b is too early
	b3.Txs = txs(200, 3)
	b4 := announcing(4, 50, "d") // c: a node found its closure invalid
	b5 := announcing(5, 70, "e") // d: a node lacked its closure
	b6 := announcing(6, 90, "f") // e: all voted, no quorum anyway
	common := []apitypes.BlockTxs{b1, b2, b3, b4, b5, b6}
	// f is the last common block: node-0 forged g after it, node-1 and
	// node-2 h.
	g, h := announcing(7, 100, "g"), announcing(7, 101, "h")
	chain := func(blocks ...apitypes.BlockTxs) load.ChainWalk {
		return load.ChainWalk{Chain: &load.WalkedChain{Blocks: blocks}}
	}
	walks := []load.ChainWalk{
		chain(append(common[:6:6], g)...),
		chain(append(common[:6:6], h)...),
		chain(append(common[:6:6], h)...),
		{Err: errors.New("connection refused")},
	}

	listed := func(slot uint64, eb, vote string, votes int) apitypes.EBTimes {
		return apitypes.EBTimes{Slot: slot, EbHash: eb, Vote: vote, Votes: votes}
	}
	lists := []EBList{
		{EBs: []apitypes.EBTimes{
			listed(0, "0000", apitypes.VoteClosureIncomplete, 0), // names no EB
			listed(10, "a", apitypes.VoteCast, 3),
			listed(25, "b", apitypes.VoteTipReplaced, 0),
			listed(30, "c", apitypes.VoteCast, 2),
			listed(50, "d", apitypes.VoteCast, 2),
			listed(70, "e", apitypes.VoteCast, 2),
			listed(95, "x", apitypes.VoteCast, 1), // its RB lost a slot battle
		}},
		{EBs: []apitypes.EBTimes{listed(10, "a", apitypes.VoteCast, 3), listed(30, "c", apitypes.VoteInvalidClosure, 2), listed(50, "d", apitypes.VoteClosureIncomplete, 2), listed(70, "e", apitypes.VoteCast, 2)}},
		{EBs: []apitypes.EBTimes{listed(10, "a", apitypes.VoteCast, 3), listed(70, "e", apitypes.VoteCast, 2)}},
		{Err: errors.New("connection refused")},
	}
	r := watchOf(4).leiosReport(clock, minCertGap, lists, walks)

	c := r.Chain
	if c == nil {
		t.Fatal("no chain section")
	}
	wantNot := map[string]int{
		apitypes.ReasonTooEarly: 1, apitypes.ReasonInvalid: 1, apitypes.ReasonIncomplete: 1, apitypes.ReasonNoQuorum: 1,
		apitypes.FatePending:    3, // f, the last common block's, and g and h ahead of it
		apitypes.ReasonOffChain: 1,
	}
	if c.NodesRead != 3 || c.Blocks != 6 || c.EBsAnnounced != 6 || c.EBsCertified != 1 || !maps.Equal(c.NotCertified, wantNot) {
		t.Errorf("chain %+v, want 3 nodes read, 6 blocks, 6 EBs announced, 1 certified, not certified %v", c, wantNot)
	}
	if len(c.Problems) != 1 || c.Problems[0] != "node-3's chain not read: connection refused" {
		t.Errorf("problems %q", c.Problems)
	}
	if c.TxsViaRBs != 8 || c.TxsViaEBs != 40 || c.Seconds != 9 || c.RBTxPerSecond != 8.0/9 || c.EBTxPerSecond != 40.0/9 {
		t.Errorf("throughput: %d and %d txs through RBs and EBs in %g s, %g and %g tx/s; want 8 and 40 in 9 s",
			c.TxsViaRBs, c.TxsViaEBs, c.Seconds, c.RBTxPerSecond, c.EBTxPerSecond)
	}

	want := map[string]struct {
		rb, certifiedBy uint64 // block numbers, 0 for none
		notCertified    string
	}{
		"a": {1, 2, ""},
		"b": {2, 0, apitypes.ReasonTooEarly},
		"c": {3, 0, apitypes.ReasonInvalid},
		"d": {4, 0, apitypes.ReasonIncomplete},
		"e": {5, 0, apitypes.ReasonNoQuorum},
		"f": {6, 0, apitypes.FatePending},
		"g": {0, 0, apitypes.FatePending},
		"h": {0, 0, apitypes.FatePending},
		"x": {0, 0, apitypes.ReasonOffChain},
	}
	if len(r.EBs) != len(want) || r.Summary.EBsSeen != 6 {
		t.Errorf("%d EBs, %d seen in the lists; want %d and 6", len(r.EBs), r.Summary.EBsSeen, len(want))
	}
	number := func(b *apitypes.TipStatus) uint64 {
		if b == nil {
			return 0
		}
		return b.BlockNumber
	}
	for _, eb := range r.EBs {
		w, ok := want[eb.EbHash]
		if !ok {
			t.Errorf("EB %q reported", eb.EbHash)
			continue
		}
		if number(eb.RB) != w.rb || number(eb.CertifiedBy) != w.certifiedBy || eb.NotCertified != w.notCertified {
			t.Errorf("EB %s: RB %+v, certified by %+v, not certified %q; want #%d, #%d, %q", eb.EbHash, eb.RB, eb.CertifiedBy, eb.NotCertified, w.rb, w.certifiedBy, w.notCertified)
		}
	}
	a := r.EBs[0]
	if *a.CertifiedBy != (apitypes.TipStatus{BlockNumber: 2, Slot: 25, Hash: "rb2-b"}) || len(a.Votes) != 3 || a.VotesSeen["node-2"] != 3 {
		t.Errorf("EB a: certified by %+v, votes %v, seen %v", a.CertifiedBy, a.Votes, a.VotesSeen)
	}
}

// TestCertifyEBsNoChain: with no chain read there is nothing to say of
// certificates, rather than every EB "not on the chain".
func TestCertifyEBsNoChain(t *testing.T) {
	lists := []EBList{{EBs: []apitypes.EBTimes{{Slot: 10, EbHash: "a", Vote: apitypes.VoteCast}}}}
	r := watchOf(1).leiosReport(consensus.Clock{SlotLength: time.Second}, 10, lists, []load.ChainWalk{{Err: errors.New("down")}})
	if r.Chain != nil || r.EBs[0].NotCertified != "" {
		t.Errorf("chain %+v, EB %+v; want neither to speak of certificates", r.Chain, r.EBs[0])
	}
}

// TestReportSpeaksTheAPIsReasons: whatever the votes and the chain, every
// reason the report gives an EB not certified is one the API gives (a
// node's GET /api/ebs: apitypes.Reasons), or apitypes.FatePending — one
// vocabulary, not two — and each of the API's reasons is one the report
// can give.
func TestReportSpeaksTheAPIsReasons(t *testing.T) {
	api := map[string]bool{apitypes.FatePending: true}
	for _, r := range apitypes.Reasons() {
		api[r] = true
	}
	for _, o := range notCertifiedOutcomes() {
		if !api[o] {
			t.Errorf("the report counts %q, which the API never gives", o)
		}
	}
	given := map[string]bool{}
	outcomes := []string{"", apitypes.VoteCast, apitypes.VoteClosureIncomplete, apitypes.VoteInvalidClosure, apitypes.VoteEquivocation, apitypes.VoteTipReplaced, apitypes.VoteTipAfterWindow}
	const gap = 5
	for _, next := range []uint64{0, 10 + gap - 1, 10 + gap} { // none, too early, late enough
		common := []apitypes.BlockTxs{{Slot: 10, Announces: &apitypes.EBRef{Slot: 10, EbHash: "a"}}}
		if next > 0 {
			common = append(common, apitypes.BlockTxs{Slot: next})
		}
		for _, a := range outcomes {
			for _, b := range outcomes {
				votes := map[string]string{}
				for node, o := range map[string]string{"node-0": a, "node-1": b} {
					if o != "" {
						votes[node] = o
					}
				}
				why := whyNotCertified(common, 0, gap, votes)
				if !api[why] {
					t.Errorf("next block at slot %d, votes %v: %q is not the API's", next, votes, why)
				}
				given[why] = true
			}
		}
	}
	// Off the common chain: certifyEBs's own case.
	c := certifyEBs(nil, nil, consensus.Clock{}, gap, ebsByPoint{{10, "x"}: &EBDiffusion{Slot: 10, EbHash: "x"}})
	for why := range c.NotCertified {
		if !api[why] {
			t.Errorf("an EB on no chain: %q is not the API's", why)
		}
		given[why] = true
	}
	for _, r := range apitypes.Reasons() {
		if !given[r] {
			t.Errorf("the API's reason %q is one the report never gives", r)
		}
	}
}
