package network

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

func TestScorerWindowAndBanExpiry(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	s := newScorer(3, time.Minute, 10*time.Minute)
	s.now = func() time.Time { return now }
	p, q := peer.ID("p"), peer.ID("q")

	steps := []struct {
		advance   time.Duration
		who       peer.ID
		wantBan   bool
		wantPGate bool // p refused after the step
	}{
		{0, p, false, false},
		{30 * time.Second, p, false, false},
		{31 * time.Second, p, false, false}, // the first fell out of the window
		{10 * time.Second, q, false, false}, // another peer's count is its own
		{10 * time.Second, p, true, true},   // three within a minute
		{9 * time.Minute, q, false, true},
		{time.Minute, q, false, false}, // p's ban is over
	}
	for i, st := range steps {
		now = now.Add(st.advance)
		if got := s.violation(st.who); got != st.wantBan {
			t.Fatalf("step %d: banned %v, want %v", i, got, st.wantBan)
		}
		if got := s.banned(p); got != st.wantPGate {
			t.Fatalf("step %d: p gated %v, want %v", i, got, st.wantPGate)
		}
	}
	if _, ok := s.bannedTill[p]; ok {
		t.Fatal("an expired ban is still stored")
	}
}
