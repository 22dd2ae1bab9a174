package main

import (
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/apitypes"
)

// TestPrintEBs: one row an EB, with its stages, votes and fate — certified
// by which block, or why not.
func TestPrintEBs(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	var b strings.Builder
	printEBs(&b, []apitypes.EBTimes{
		{Slot: 12, EbHash: "aabbccddeeff0011", Txs: 40, Vote: "voted", Votes: 3,
			StageMs: apitypes.StageMs{EBStages: apitypes.EBStages[int64]{Announced: ms(20), Body: ms(95), Closure: ms(180), Validated: ms(240), Voted: ms(250)}},
			Fate:    &apitypes.EBFate{Fate: apitypes.FateCertified, CertifiedBy: &apitypes.BlockRef{Number: 9, Slot: 27, Hash: "99"}}},
		{Slot: 30, EbHash: "1122334455667788", Txs: 12, Votes: 0, StageMs: apitypes.StageMs{EBStages: apitypes.EBStages[int64]{Announced: ms(15)}},
			Fate: &apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonTooEarly}},
		{Slot: 41, EbHash: "0102030405060708", Fate: &apitypes.EBFate{Fate: apitypes.FatePending}},
	})
	want := `slot  EB        txs  announced  body   closure  validated  voted   vote   votes  fate
12    aabbccdd  40   20 ms      95 ms  180 ms   240 ms     250 ms  voted  3      certified by #9 (slot 27)
30    11223344  12   15 ms      -      -        -          -       -      0      not certified: next RB came too early
41    01020304  0    -          -      -        -          -       -      0      pending
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
