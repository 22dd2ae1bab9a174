package node

import (
	"context"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// readdRolledBack returns to the mempool the txs of blocks that chain
// selection abandoned. A tx in a block on a losing fork was dropped from
// the mempool when that block was selected; without this it would be lost
// although it is still valid on the winning chain.
//
// Each round first syncs the mempool to the new tip, so the txs are
// validated against the chain that won (against the old snapshot they
// would look spent and be remembered as rejected).
func (n *Node) readdRolledBack(ctx context.Context) error {
	prev := n.chain.Tip()
	for {
		changed := n.chain.TipChanged()
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		tip := n.chain.Tip()
		abandoned := n.abandonedSince(prev)
		prev = tip
		if len(abandoned) == 0 {
			continue
		}
		if _, err := n.mempool.Sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			n.log.Warn("mempool sync before re-adding rolled-back txs", "err", err)
		}
		readded := 0
		for _, blk := range abandoned {
			for _, raw := range blk.Body.Txs {
				tx, err := ledger.DecodeTx(raw)
				if err != nil {
					continue // it passed the ledger once; cannot happen
				}
				addCtx, cancel := context.WithTimeout(ctx, time.Second)
				if n.mempool.Add(addCtx, tx) == nil {
					readded++
				}
				cancel()
			}
		}
		if readded > 0 {
			n.log.Info("re-added txs of rolled-back blocks", "blocks", len(abandoned), "txs", readded)
		}
	}
}

// abandonedSince returns the blocks of the chain that ended at old which
// are no longer on the selected chain, oldest first.
func (n *Node) abandonedSince(old block.Tip) []*block.Block {
	var abandoned []*block.Block
	for hash := old.Point.Hash; !hash.IsZero() && len(abandoned) <= n.genesis.SecurityParam; {
		blk, err := n.chain.Block(hash)
		if err != nil {
			break // pruned: older than anything selection can abandon
		}
		if onChain, err := n.chain.BlockByNumber(blk.Header.BlockNumber); err == nil && onChain.Hash() == hash {
			break
		}
		abandoned = append(abandoned, blk)
		hash = blk.Header.Prev()
	}
	for i, j := 0, len(abandoned)-1; i < j; i, j = i+1, j-1 {
		abandoned[i], abandoned[j] = abandoned[j], abandoned[i]
	}
	return abandoned
}
