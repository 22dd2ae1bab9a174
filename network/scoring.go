package network

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// scorer counts violations per peer and keeps the ban list, which the
// host's gater (gating.go) enforces.
type scorer struct {
	maxViolations int
	window        time.Duration
	banFor        time.Duration
	now           func() time.Time

	mu         sync.Mutex              // guards the maps; never held while calling out
	violations map[peer.ID][]time.Time // within the window, oldest first
	bannedTill map[peer.ID]time.Time
}

func newScorer(maxViolations int, window, banFor time.Duration) *scorer {
	return &scorer{
		maxViolations: maxViolations,
		window:        window,
		banFor:        banFor,
		now:           time.Now,
		violations:    make(map[peer.ID][]time.Time),
		bannedTill:    make(map[peer.ID]time.Time),
	}
}

// violation records one violation by p and reports whether p is now
// banned: it had maxViolations within the window.
func (s *scorer) violation(p peer.ID) (banned bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.forget(now)
	recent := s.violations[p]
	for len(recent) > 0 && now.Sub(recent[0]) > s.window {
		recent = recent[1:]
	}
	recent = append(recent, now)
	if len(recent) < s.maxViolations {
		s.violations[p] = recent
		return false
	}
	delete(s.violations, p)
	s.bannedTill[p] = now.Add(s.banFor)
	return true
}

// ban bans p now, whatever its count: for offences that need no repeat.
func (s *scorer) ban(p peer.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.violations, p)
	s.bannedTill[p] = s.now().Add(s.banFor)
}

// forget drops violations older than the window and expired bans, so the
// maps hold only peers that matter now. mu is held; violations are rare, so
// a sweep per violation is cheap.
func (s *scorer) forget(now time.Time) {
	for p, times := range s.violations {
		if now.Sub(times[len(times)-1]) > s.window {
			delete(s.violations, p)
		}
	}
	for p, till := range s.bannedTill {
		if !now.Before(till) {
			delete(s.bannedTill, p)
		}
	}
}

// banned reports whether p is banned now, forgetting expired bans.
func (s *scorer) banned(p peer.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	till, ok := s.bannedTill[p]
	if !ok {
		return false
	}
	if s.now().Before(till) {
		return true
	}
	delete(s.bannedTill, p)
	return false
}
