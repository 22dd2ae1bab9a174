package network

import (
	"fmt"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// ErrWasteful: the peer sent more useless messages than its budget allows
// (WasteBudget). A violation: an honest peer sends a few, never a stream.
var ErrWasteful = protocol.NewViolation("network: the peer spent its budget of useless messages")

// WasteBudget is what one peer may send that does the node no good and
// costs it work: requests for data it does not hold, announcements,
// offers and votes below its immutable tip. An honest peer sends some — a
// request racing a prune, the catch-up of a peer behind us — so each is
// not a violation; a peer that goes on is. The budget refills at
// perSecond up to burst; what it does not cover is ErrWasteful, which the
// caller ends its session with, so it is counted as the peer's violation
// and a peer that goes on is banned. Protocols reach their peer's budget
// through Peer.Waste; a WasteBudget of their own stands in for it in tests.
type WasteBudget struct {
	perSecond, burst float64

	mu   sync.Mutex // guards left and at
	left float64
	at   time.Time
}

// NewWasteBudget is a full budget of burst, refilled at perSecond.
func NewWasteBudget(perSecond, burst int) *WasteBudget {
	return &WasteBudget{perSecond: float64(perSecond), burst: float64(burst), left: float64(burst), at: time.Now()}
}

// Spend takes n from the budget, or fails with ErrWasteful naming what
// and takes nothing.
func (b *WasteBudget) Spend(n int, what string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.left = min(b.burst, b.left+now.Sub(b.at).Seconds()*b.perSecond)
	b.at = now
	if float64(n) > b.left {
		return fmt.Errorf("%w: %s, past %.0f a second in bursts of %.0f", ErrWasteful, what, b.perSecond, b.burst)
	}
	b.left -= float64(n)
	return nil
}

// Waste charges n useless messages or requests of kind what (a metric
// label: a few fixed names) to the peer's budget (HostOptions.WastePerSecond,
// WasteBurst): nil while it covers them, else ErrWasteful, which the caller
// ends its session with. Every one is counted
// (leiosnode_network_useless_total, by what). A peer no longer connected
// is charged nothing: its sessions are ending.
func (p *Peer) Waste(n int, what string) error {
	p.h.metrics.useless.WithLabelValues(what).Add(float64(n))
	p.h.mu.Lock()
	lp := p.h.live[p.ID]
	p.h.mu.Unlock()
	if lp == nil {
		return nil
	}
	return lp.waste.Spend(n, what)
}
