package leios

import (
	"context"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// Prune handles the immutable tip passing slot: the tx cache is evicted
// first, then the LeiosDB collects its garbage (the hit-prune order: a
// cache hit must never outlive the LeiosDB data it vouches for), then the
// fetch logic forgets the points below slot — except EBs the LeiosDB keeps
// for good (promoted), whose closures a syncing node still needs — and the
// relay and the queue of closures fetched ahead forget their state below
// slot.
func (p *Pipeline) Prune(slot uint64) error {
	if err := p.pruneStores(slot); err != nil {
		return fmt.Errorf("leios: prune below %d: %w", slot, err)
	}
	p.relay.Prune(slot)
	p.ahead.prune(slot)
	p.releaseAhead()
	return nil
}

func (p *Pipeline) pruneStores(slot uint64) error {
	p.ingestMu.Lock()
	defer p.ingestMu.Unlock()
	p.cache.EvictOlderThan(slot)
	if _, err := p.db.GC(slot); err != nil {
		return err
	}
	keep := make(map[block.Point]bool)
	for _, pt := range p.fetcher.PointsBelow(slot) {
		info, ok, err := p.db.PointInfo(pt)
		if err != nil {
			return err
		}
		if ok && info.Promoted {
			keep[pt] = true
		}
	}
	p.fetcher.Prune(slot, keep)
	return nil
}

// pruneOnImmutableTip prunes whenever the chain's immutable tip has moved
// past the last pruned slot, until ctx ends. Certified EBs are promoted
// first, from the immutable tip of the last prune on, however far the tip
// moved since.
func (p *Pipeline) pruneOnImmutableTip(ctx context.Context) error {
	var pruned uint64
	promoteFrom := p.chain.ImmutableTip().BlockNumber
	for {
		changed := p.chain.TipChanged() // before reading, so no change is missed
		if immutable := p.chain.ImmutableTip(); immutable.Point.Slot > pruned {
			if err := p.promoteCertified(promoteFrom); err != nil {
				p.log.Warn("promoting certified EBs", "err", err)
			} else if err := p.Prune(immutable.Point.Slot); err != nil {
				p.log.Warn("pruning Leios state", "slot", immutable.Point.Slot, "err", err)
			} else {
				pruned, promoteFrom = immutable.Point.Slot, immutable.BlockNumber
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}
