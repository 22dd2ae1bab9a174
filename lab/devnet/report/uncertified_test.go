package report

import (
	"bytes"
	"maps"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/load"
)

// TestUncertified: of the span's EBs on the chain, those whose next block
// came minCertGap (10) slots or more later and did not certify them, by
// their fate, and whether a rival RB announced another EB in their slot.
func TestUncertified(t *testing.T) {
	clock := consensus.Clock{Start: loadStart, SlotLength: time.Second}
	eb := func(slot uint64, hash string) *apitypes.EBRef { return &apitypes.EBRef{Slot: slot, EbHash: hash} }
	r := loadRun{clock: clock, common: []apitypes.BlockTxs{
		{Slot: 5, Announces: eb(5, "before")},                      // before the span
		{Slot: 10, Announces: eb(10, "a")},                         // certified by the next
		{Slot: 25, Certifies: eb(10, "a"), Announces: eb(25, "b")}, // the next too early
		{Slot: 28, Announces: eb(28, "c")},                         // late enough, split by a rival
		{Slot: 50, Announces: eb(50, "d")},                         // late enough, no rival
		{Slot: 70, Announces: eb(70, "e")},                         // fate unknown
	}, ebs: []EBDiffusion{
		{Slot: 28, EbHash: "c", NotCertified: apitypes.ReasonNoQuorum},
		{Slot: 28, EbHash: "c-rival", NotCertified: apitypes.ReasonOffChain},
		{Slot: 50, EbHash: "d", NotCertified: apitypes.ReasonNoQuorum},
	}}
	span, _ := load.NewSpan(loadStart, 8*time.Second, loadStart.Add(100*time.Second))
	u := r.uncertified(&span, 10)
	if u == nil || !maps.Equal(u.ByFate, map[string]int{apitypes.ReasonNoQuorum: 2}) || u.WithRival != 1 {
		t.Fatalf("uncertified %+v, want 2 with no quorum, 1 with a rival", u)
	}
	var out bytes.Buffer
	u.print(&out)
	want := "  not certified though the next RB came late enough: 2 (" + apitypes.ReasonNoQuorum + " 2); 1 with a rival RB in their slot, which split the votes\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	if u := r.uncertified(nil, 10); u != nil {
		t.Errorf("without a span: %+v", u)
	}
	r.common = r.common[:3]
	if u := r.uncertified(&span, 10); u != nil {
		t.Errorf("none uncertified: %+v", u)
	}
}
