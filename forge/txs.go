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
// CIP's one-element array around the map, and the map's head.
const (
	ebEntryOverhead = 34 + 5
	ebHeadOverhead  = 1 + 5
)

// selection is what one snapshot yields for a block: the RB's own txs and
// the txs of the EB it announces (none if the RB carries everything).
type selection struct {
	rb []*ledger.Tx
	eb []*ledger.Tx
}

// selectTxs takes one mempool snapshot and picks its block's txs: first
// up to the RB body limit (if closure is nil: a CertRB carries none), then,
// for the EB, up to the EB limits. view is the tip's ledger; closure the
// diff of the closure a CertRB certifies on it, applied before its txs.
//
// A snapshot validated against this very tip (the mempool syncs on every
// tip change, so it usually is) needs no ledger read: its txs apply in
// order, and only a certified closure can take their inputs
// (SelectValidTxs). Otherwise each tx is reapplied (SelectTxs).
func (f *Forger) selectTxs(view ledger.UTxO, tip block.Tip, slot uint64, closure *ledger.Diff) selection {
	if f.opts.Mempool == nil {
		return selection{}
	}
	rbBody := f.opts.RBMaxBodyBytes
	if closure != nil {
		rbBody = 0
	}
	txs, validatedAt := f.opts.Mempool.Txs()
	if validatedAt == tip {
		rb, eb := SelectValidTxs(slot, txs, closure, rbBody, f.budget.limits(f.opts.EBLimits))
		return selection{rb: rb, eb: eb}
	}
	if closure != nil {
		view = ledger.Overlay{Base: view, Diffs: []*ledger.Diff{closure}}
	}
	rb, eb := SelectTxs(*f.opts.Params, view, slot, txs, rbBody, f.budget.limits(f.opts.EBLimits))
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
	return fill(txs, rbBody, ebLimits, func(tx *ledger.Tx) bool {
		diff, err := ledger.Reapply(p, utxo, slot, tx)
		if err != nil {
			return false
		}
		acc.Append(diff)
		return true
	}, func(*ledger.Tx) {})
}

// SelectValidTxs is SelectTxs for txs known to apply in order on the
// block's ledger as it was before the certified closure whose diff is
// closure (nil: none) was applied — a mempool snapshot validated against
// the tip: no ledger is read. A tx still applies unless its ttl has passed
// at slot, the closure spent one of its inputs, or it spends an output of
// a tx left out that the closure did not create either (the closure may
// hold that very tx): a tx's other rules depend only on itself and on the
// outputs it spends, which never change (a TxIn names one output forever).
func SelectValidTxs(slot uint64, txs iter.Seq[*ledger.Tx], closure *ledger.Diff, rbBody int, ebLimits block.EBLimits) (rb, eb []*ledger.Tx) {
	if closure == nil {
		closure = ledger.NewDiff()
	}
	leftOut := map[[32]byte]bool{} // ids of txs seen and not taken
	leave := func(tx *ledger.Tx) { leftOut[tx.ID()] = true }
	return fill(txs, rbBody, ebLimits, func(tx *ledger.Tx) bool {
		ok := tx.TTL == nil || slot < *tx.TTL
		for _, in := range tx.Inputs {
			_, spent := closure.Deletes[in]
			_, created := closure.Inserts[in]
			ok = ok && !spent && (!leftOut[in.TxID] || created)
		}
		if !ok {
			leave(tx)
		}
		return ok
	}, leave)
}

// fill walks txs in order, offering each that fits to take (which reports
// whether it applies, and records it if so) and each that does not to
// leave: first into the RB, up to a body of rbBody bytes, then into the
// EB, up to ebLimits. It stops once no further tx can fit.
func fill(txs iter.Seq[*ledger.Tx], rbBody int, ebLimits block.EBLimits, take func(*ledger.Tx) bool, leave func(*ledger.Tx)) (rb, eb []*ledger.Tx) {
	rbBudget := max(rbBody-bodyOverhead, 0)
	ebBody, ebClosure := ebHeadOverhead, 0
	for tx := range txs {
		toRB := tx.Size() <= rbBudget && eb == nil
		toEB := !toRB && ebLimits.MaxTxs > 0 &&
			len(eb) < ebLimits.MaxTxs &&
			ebClosure+tx.Size() <= ebLimits.MaxClosureBytes &&
			ebBody+ebEntryOverhead <= ebLimits.MaxBodyBytes
		if !toRB && !toEB {
			if ebLimits.MaxTxs == 0 || len(eb) == ebLimits.MaxTxs || ebBody+ebEntryOverhead > ebLimits.MaxBodyBytes {
				break
			}
			leave(tx)
			continue
		}
		if !take(tx) {
			continue
		}
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
