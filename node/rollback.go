package node

import (
	"context"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// syncMempool syncs the mempool on every tip change and, after a rollback,
// gives back what the fork that lost took from it.
//
// A tx in a block on a losing fork left the mempool when that block was
// selected; so did, at this sync, every tx that spends its outputs (a chain
// of txs). Both are still valid on the winning chain once the first is
// back, so after the sync the abandoned blocks' txs are added again, oldest
// first, then the txs the sync dropped, in their old order. Without a
// rollback, a dropped tx is one the new blocks included or conflict with,
// and stays dropped.
func (n *Node) syncMempool(ctx context.Context) error {
	prev := n.chain.Tip()
	for {
		changed := n.chain.TipChanged() // before the sync, so no change is missed
		before := n.mempool.Snapshot()
		abandoned := n.abandonedSince(prev)
		prev = n.chain.Tip()
		report, err := n.mempool.Sync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(abandoned) > 0 {
			n.readd(ctx, abandoned, before, report.Dropped)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

// readd adds again the txs of abandoned blocks and the txs a sync dropped
// (looked up in the snapshot from before it). Failures are expected — a tx
// the winning chain also holds — and ignored.
func (n *Node) readd(ctx context.Context, abandoned []*block.Block, before *mempool.Snapshot, dropped []block.Hash) {
	var txs []*ledger.Tx
	for _, blk := range abandoned {
		for _, raw := range blk.Body.Txs {
			if tx, err := ledger.DecodeTx(raw); err == nil { // it passed the ledger once
				txs = append(txs, tx)
			}
		}
	}
	for _, hash := range dropped {
		if entry, ok := before.Lookup(hash); ok {
			txs = append(txs, entry.Tx)
		}
	}
	readded := 0
	for _, tx := range txs {
		addCtx, cancel := context.WithTimeout(ctx, time.Second)
		if n.mempool.Add(addCtx, tx) == nil {
			readded++
		}
		cancel()
	}
	n.log.Info("rollback: txs back in the mempool", "blocks", len(abandoned), "candidates", len(txs), "readded", readded)
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
