package forge

import (
	"sync"

	"github.com/leiosnode/leiosnode/block"
)

// The EB budget's steps: the share of the EB limits a forged EB may fill
// grows by budgetStep for each EB whose voting window this node met, and
// halves for each it missed, never below budgetFloor.
const (
	budgetStep  = 0.1
	budgetFloor = 0.05
)

// ebBudget sizes the EBs this pool forges to what was checked in time
// lately, as TCP sizes its window: additive increase, multiplicative
// decrease. An EB whose closure the committee cannot hold and check before
// its voting window closes is not certified; its txs wait in the mempools
// for the next EB, which is then as big or bigger — under load every EB
// is a full one, and none is certified again. Shrinking the EBs when the
// windows are missed (the node's own, Leios.LatestWindow: the nodes of a
// network do the same work for an EB) and growing them back while they
// are met keeps them to what can be certified. The protocol's limits stay
// the bound.
type ebBudget struct {
	mu    sync.Mutex
	share float64 // of the EB limits, in [budgetFloor, 1]
	slot  uint64  // the last EB judged
	seen  bool    // slot is set
}

func newEBBudget() *ebBudget { return &ebBudget{share: 1} }

// observe takes the newest EB whose window has closed: the slot of its RB
// and whether this node missed it. Each EB counts once.
func (b *ebBudget) observe(slot uint64, missed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen && slot <= b.slot {
		return
	}
	b.slot, b.seen = slot, true
	if missed {
		b.share = max(budgetFloor, b.share/2)
	} else {
		b.share = min(1, b.share+budgetStep)
	}
}

// limits are l within the budget: its tx count and closure bytes scaled.
func (b *ebBudget) limits(l block.EBLimits) block.EBLimits {
	b.mu.Lock()
	share := b.share
	b.mu.Unlock()
	if share >= 1 || l.MaxTxs == 0 {
		return l
	}
	l.MaxTxs = max(1, int(share*float64(l.MaxTxs)))
	l.MaxClosureBytes = max(1, int(share*float64(l.MaxClosureBytes)))
	return l
}

// EBShare is the share of the EB limits this pool's next EB may fill.
func (f *Forger) EBShare() float64 {
	f.budget.mu.Lock()
	defer f.budget.mu.Unlock()
	return f.budget.share
}
