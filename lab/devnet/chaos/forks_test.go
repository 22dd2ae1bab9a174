package chaos

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
)

// chainStatus is a status whose chain is blocks 1..tip, the blocks above
// forkAt on fork "b", the others on "a", with the recent blocks /status
// lists.
func chainStatus(tip, forkAt uint64) *apitypes.Status {
	hash := func(n uint64) string {
		if n > forkAt {
			return blockHash(n, "b")
		}
		return blockHash(n, "a")
	}
	st := &apitypes.Status{Tip: apitypes.TipStatus{BlockNumber: tip, Hash: hash(tip)}}
	for n := tip; n > 0 && len(st.RecentBlocks) < apitypes.RecentBlockCount; n-- {
		st.RecentBlocks = append(st.RecentBlocks, apitypes.TipStatus{BlockNumber: n, Hash: hash(n)})
	}
	return st
}

func TestRolledBack(t *testing.T) {
	const never = 1 << 62 // no fork: every block on "a"
	tests := []struct {
		name      string
		prev, cur *apitypes.Status
		depth     uint64
		atLeast   bool
		rolled    bool
	}{
		{"same tip", chainStatus(10, never), chainStatus(10, never), 0, false, false},
		{"extended", chainStatus(10, never), chainStatus(12, never), 0, false, false},
		{"moved on past the window", chainStatus(10, never), chainStatus(30, 5), 0, false, false},
		{"switched to a fork of two blocks", chainStatus(10, never), chainStatus(11, 8), 2, false, true},
		{"switched at the tip", chainStatus(10, never), chainStatus(10, 9), 1, false, true},
		{"back from a fork", chainStatus(10, 9), chainStatus(10, never), 1, false, true},
		{"rolled back, not switched yet", chainStatus(10, never), chainStatus(7, never), 3, false, true},
		{"a fork deeper than the lists", chainStatus(20, never), chainStatus(20, 5), 8, true, true},
		{"an empty chain before", &apitypes.Status{}, chainStatus(3, never), 0, false, false},
	}
	for _, tt := range tests {
		depth, atLeast, rolled := rolledBack(tt.prev, tt.cur)
		if depth != tt.depth || atLeast != tt.atLeast || rolled != tt.rolled {
			t.Errorf("%s: depth %d, at least %v, rolled back %v; want %d, %v, %v", tt.name, depth, atLeast, rolled, tt.depth, tt.atLeast, tt.rolled)
		}
	}
}

// TestForkWatch: rollbacks are found between two polls of one process,
// not across a restart, and a round older than the last one taken is
// ignored (the supervisor and the chaos mode poll at once).
func TestForkWatch(t *testing.T) {
	w := newForkWatch([]string{"node-0", "node-1"})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const never = 1 << 62
	w.Observe(at(1), []apiclient.StatusPoll{{Status: chainStatus(10, never)}, {Status: chainStatus(10, never)}})
	w.Observe(at(2), []apiclient.StatusPoll{{Status: chainStatus(11, 8)}, down}) // node-0 switched
	// A round started before the last one taken, answered after it: old.
	w.Observe(at(1).Add(-time.Millisecond), []apiclient.StatusPoll{{Status: chainStatus(10, never)}, {Status: chainStatus(9, never)}})
	w.restarted(1, at(3))
	w.Observe(at(4), []apiclient.StatusPoll{{Status: chainStatus(11, 8)}, {Status: chainStatus(5, never)}}) // node-1 came back lower
	w.Observe(at(5), []apiclient.StatusPoll{{Status: chainStatus(12, 8)}, {Status: chainStatus(6, never)}})
	forks := w.Seen()
	if len(forks) != 1 {
		t.Fatalf("forks %+v, want node-0's only", forks)
	}
	if f := forks[0]; f.Node != "node-0" || f.Depth != 2 || f.AtLeast || !f.At.Equal(at(2)) || f.From.BlockNumber != 10 || f.To.BlockNumber != 11 {
		t.Errorf("fork %+v", f)
	}
}

// down is the poll of a node that did not answer.
var down = apiclient.StatusPoll{Err: errors.New("connection refused")}

// blockHash is a made-up hash of block number on fork, 64 hex digits; ""
// (the tip of an empty chain) without a fork.
func blockHash(number uint64, fork string) string {
	if fork == "" {
		return ""
	}
	return fmt.Sprintf("%s%015x%048d", fork, number, 0)
}
