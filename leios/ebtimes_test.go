package leios

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// The EBs whose voting windows this node missed, counted from the newest
// back: a vote cast or a closure held in time ends the run; outcomes that
// say nothing of the node's lag are passed over; a window still open is
// not judged yet; a verdict older than the horizon (four mean RB
// intervals: 400 slots at f 0.01) no longer counts, so a node that missed
// windows and then saw no EB is not judged behind for good.
func TestMissedInARow(t *testing.T) {
	timing := consensus.Timing{SlotLength: 100 * time.Millisecond, F: 0.01, Leios: consensus.LeiosParams{LHdr: 1, LVote: 4}}
	clock := consensus.Clock{Start: time.Unix(1_000_000, 0), SlotLength: timing.SlotLength}
	at := func(slot uint64, ms int) time.Time {
		return clock.SlotStart(slot).Add(time.Duration(ms) * time.Millisecond)
	}
	type eb struct {
		slot    uint64
		vote    string // outcome, "" for none
		closure int    // ms after the slot start; < 0: never held
	}
	for _, tc := range []struct {
		name string
		ebs  []eb
		now  time.Time
		want int
	}{
		{"none", nil, at(100, 0), 0},
		{"last voted", []eb{{10, forge.VoteClosureIncomplete, -1}, {20, forge.VoteCast, 300}}, at(100, 0), 0},
		{"two missed after a vote", []eb{{10, forge.VoteCast, 300}, {20, forge.VoteClosureIncomplete, 900}, {30, forge.VoteClosureIncomplete, -1}}, at(100, 0), 2},
		{"arrival order is not slot order", []eb{{30, forge.VoteClosureIncomplete, -1}, {10, forge.VoteCast, 300}, {20, forge.VoteClosureIncomplete, 900}}, at(100, 0), 2},
		{"the node's own fault only", []eb{{10, forge.VoteClosureIncomplete, -1}, {20, forge.VoteTipReplaced, 900}, {30, forge.VoteInvalidClosure, 100}, {40, forge.VoteEquivocation, 100}}, at(100, 0), 1},
		{"an RB adopted after its window is a miss", []eb{{10, forge.VoteCast, 300}, {20, forge.VoteTipAfterWindow, 300}}, at(100, 0), 1},
		{"relay: closure against the window", []eb{{10, "", 700}, {20, "", 599}, {30, "", 600}, {40, "", -1}}, at(100, 0), 1},
		{"window still open", []eb{{10, forge.VoteClosureIncomplete, -1}, {95, forge.VoteClosureIncomplete, -1}}, at(100, 0), 1},
		{"window closed", []eb{{10, forge.VoteClosureIncomplete, -1}, {94, forge.VoteClosureIncomplete, -1}}, at(100, 1), 2},
		{"an old miss expires", []eb{{10, forge.VoteClosureIncomplete, -1}, {20, forge.VoteClosureIncomplete, -1}}, at(425, 0), 1},
		{"every old miss expires", []eb{{10, forge.VoteClosureIncomplete, -1}, {20, forge.VoteClosureIncomplete, -1}}, at(427, 0), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := newEBLog(timing, clock, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tc.ebs {
				p := block.Point{Slot: e.slot, Hash: block.Hash{byte(e.slot)}}
				l.recordAnnounced(p, block.Hash{0xff, byte(e.slot)}, at(e.slot, 50))
				if e.closure >= 0 {
					l.record(leiosdb.Event{Kind: leiosdb.ClosureComplete, Point: p}, at(e.slot, e.closure))
				}
				if e.vote != "" {
					l.recordVote(p, e.vote, at(e.slot, 600))
				}
			}
			if got := l.missedInARow(tc.now); got != tc.want {
				t.Fatalf("%d missed in a row, want %d", got, tc.want)
			}
		})
	}
}
