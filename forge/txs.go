package forge

import (
	"context"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// bodyOverhead is the most a body adds around its txs: the outer array, the
// tx array's head and the null certificate.
const bodyOverhead = 1 + 5 + 1

// selectTxs takes one mempool snapshot and picks, in ticket order, the txs
// that still apply on the tip the block extends, up to the body limit.
//
// The snapshot may have been validated against an older tip than view's
// (its sync runs after each tip change), so every tx is reapplied here on
// the exact ledger the block will be applied to; a tx that no longer fits
// is skipped and the sync will drop it. Reapply skips signatures: the
// mempool checked them on admission and the bytes are unchanged.
func (f *Forger) selectTxs(view ledger.UTxO, slot uint64) []*ledger.Tx {
	if f.opts.Mempool == nil {
		return nil
	}
	snapshot := f.opts.Mempool.Snapshot()
	budget := f.opts.RBMaxBodyBytes - bodyOverhead
	acc := ledger.NewDiff()
	utxo := ledger.Overlay{Base: view, Diffs: []*ledger.Diff{acc}}
	var txs []*ledger.Tx
	for entry := range snapshot.All() {
		tx := entry.Tx
		if tx.Size() > budget {
			if budget < 200 {
				break // no typical tx fits any more
			}
			continue
		}
		diff, err := ledger.Reapply(*f.opts.Params, utxo, slot, tx)
		if err != nil {
			continue
		}
		acc.Append(diff)
		txs = append(txs, tx)
		budget -= tx.Size()
	}
	return txs
}

// dropTxs removes from the mempool the txs of a forged block the chain
// refused, so the next block is not built from them again.
func (f *Forger) dropTxs(txs []*ledger.Tx) {
	hashes := make([]block.Hash, len(txs))
	for i, tx := range txs {
		hashes[i] = tx.Hash()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := f.opts.Mempool.RemoveTxs(ctx, hashes); err != nil {
		f.opts.Logger.Warn("forge: removing the txs of a refused block", "err", err)
	}
}
