package network

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// scorer counts violations per peer and keeps the ban list. As the host's
// libp2p ConnectionGater it refuses banned peers, in both directions, until
// their ban expires.
type scorer struct {
	maxViolations int
	window        time.Duration
	banFor        time.Duration
	now           func() time.Time
	onRefuse      func() // counts connections refused to banned peers

	mu         sync.Mutex              // guards the maps; never held while calling out
	violations map[peer.ID][]time.Time // within the window, oldest first
	bannedTill map[peer.ID]time.Time
}

func newScorer(maxViolations int, window, banFor time.Duration, onRefuse func()) *scorer {
	return &scorer{
		maxViolations: maxViolations,
		window:        window,
		banFor:        banFor,
		now:           time.Now,
		onRefuse:      onRefuse,
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

// allow admits p unless it is banned.
func (s *scorer) allow(p peer.ID) bool {
	if s.banned(p) {
		s.onRefuse()
		return false
	}
	return true
}

func (s *scorer) InterceptPeerDial(p peer.ID) bool                 { return s.allow(p) }
func (s *scorer) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool { return s.allow(p) }
func (s *scorer) InterceptAccept(network.ConnMultiaddrs) bool      { return true }
func (s *scorer) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return s.allow(p)
}
func (s *scorer) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }
