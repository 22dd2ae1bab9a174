package forge

import (
	"context"
	"iter"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// bodyOverhead is the most a body adds around its txs: the outer array, the
// tx array's head and the null certificate.
const bodyOverhead = 1 + 5 + 1

// ebEntryOverhead is the most an EB body entry adds to a tx beyond nothing:
// a 34-byte hash item and a size of up to 5 bytes; ebHeadOverhead is the
// map's head.
const (
	ebEntryOverhead = 34 + 5
	ebHeadOverhead  = 5
)

// selection is what one snapshot yields for a block: the RB's own txs and
// the txs of the EB it announces (none if the RB carries everything).
type selection struct {
	rb []*ledger.Tx
	eb []*ledger.Tx
}

// selectTxs takes one mempool snapshot and picks its block's txs
// (SelectTxs): first up to the RB body limit (if withRB: a CertRB carries
// none), then, for the EB, up to the EB limits.
func (f *Forger) selectTxs(view ledger.UTxO, slot uint64, withRB bool) selection {
	if f.opts.Mempool == nil {
		return selection{}
	}
	rbBody := f.opts.RBMaxBodyBytes
	if !withRB {
		rbBody = 0
	}
	rb, eb := SelectTxs(*f.opts.Params, view, slot, f.opts.Mempool.Txs(), rbBody, f.opts.EBLimits)
	return selection{rb: rb, eb: eb}
}

// SelectTxs is the forge's walk of one mempool snapshot: it picks from txs,
// in order (ticket order), those that still apply on view, the ledger the
// block's txs extend — first for the RB, up to a body of rbBody bytes (0:
// none), then for the EB it announces, up to ebLimits (zero MaxTxs: no EB).
//
// The snapshot may have been validated against an older tip than view's
// (its sync runs after each tip change), so every tx is reapplied here on
// the exact ledger the block will be applied to — the EB's after the RB's,
// as a certificate will apply them; a tx that no longer applies is skipped
// and the sync will drop it. Reapply skips signatures: the mempool checked
// them on admission and the bytes are unchanged.
func SelectTxs(p ledger.Params, view ledger.UTxO, slot uint64, txs iter.Seq[*ledger.Tx], rbBody int, ebLimits block.EBLimits) (rb, eb []*ledger.Tx) {
	acc := ledger.NewDiff()
	utxo := ledger.Overlay{Base: view, Diffs: []*ledger.Diff{acc}}
	rbBudget := max(rbBody-bodyOverhead, 0)
	ebBody, ebClosure := ebHeadOverhead, 0
	for tx := range txs {
		toRB := tx.Size() <= rbBudget && eb == nil
		toEB := !toRB && ebLimits.MaxTxs > 0 &&
			len(eb) < ebLimits.MaxTxs &&
			ebClosure+tx.Size() <= ebLimits.MaxClosureBytes &&
			ebBody+ebEntryOverhead <= ebLimits.MaxBodyBytes
		if !toRB && !toEB {
			if ebLimits.MaxTxs == 0 || len(eb) == ebLimits.MaxTxs {
				break
			}
			continue
		}
		diff, err := ledger.Reapply(p, utxo, slot, tx)
		if err != nil {
			continue
		}
		acc.Append(diff)
		if toRB {
			rb = append(rb, tx)
			rbBudget -= tx.Size()
		} else {
			eb = append(eb, tx)
			ebBody += ebEntryOverhead
			ebClosure += tx.Size()
		}
	}
	return rb, eb
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
