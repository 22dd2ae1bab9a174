package mempool

import (
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// ExtensionView is what a ledger view from Options.TipLedger may offer so
// that a sync on a chain extension costs what the new blocks changed, not
// what the mempool holds. chaindb's LedgerView has it.
//
// SpentSince(p) answers ok when p is a point of the view's own chain — its
// point or an ancestor the view can still speak for — and then spent(in)
// reports, for an output unspent at p, whether the blocks after p up to the
// view's point spent it, consistently with the view's Lookup. A view
// without it, or one that answers !ok, gets the full revalidation.
type ExtensionView interface {
	SpentSince(p block.Point) (spent func(ledger.TxIn) bool, ok bool)
}

// carrier judges, without reapplying them, the txs of an old lineage
// against a new base that extends the old base: the extension path of a
// sync. It must reach exactly the verdicts of ledger.Reapply, in ticket
// order, on the new base.
//
// Why it can. ledger.Reapply (rules.go: applyInto, witnesses skipped)
// reads nothing but the tx itself (size, inputs non-empty and distinct,
// outputs' network and minimum, fee), the params, the slot (ttl, validity
// start) and, for each input, the output it names — and an output never
// changes: a TxIn names it by the hash of its creator's body, so value
// conservation gives the same answer wherever the input is found. What can
// change is the slot and whether each input is unspent. Every tx of the
// old lineage was valid after the ones before it on the old base, so each
// input was either unspent on the old base (at p, the old tip) or created
// by an earlier tx of the lineage. On a new base extending p, a tx is
// therefore still valid unless:
//
//	(a) an input unspent at p was spent by the new blocks (the tx was
//	    included, or a block tx conflicts): ExtensionView's spent says so;
//	(b) an input was created by an earlier tx of the lineage that is
//	    dropped now: it is unspent on the new base iff the dropped tx was
//	    included and nothing spent the output since — only these inputs
//	    are looked up in the new base (an included creator put it on the
//	    chain; a conflicting one did not);
//	(c) its ttl has passed, or its validity start not come, at the new
//	    slot (checked on the tx's own fields: a validity start only gets
//	    more valid as slots pass, but a wall-clock Options.Slot may step
//	    back).
//
// Nothing else can fail: in the new lineage an input is found where it was
// before — on the new base if it was unspent at p and no block spent it,
// at the earlier tx that created it if that tx is kept — and no earlier
// kept tx spends it, an output being spent once in the old lineage. So a
// kept tx costs no ledger read.
type carrier struct {
	old   *lineage
	base  ledger.UTxO            // the new base
	spent func(ledger.TxIn) bool // outputs unspent at the old tip spent since
	slot  uint64                 // the slot validated for
	kept  []bool                 // by position in old: the verdicts so far
	reads int                    // lookups in base, for SyncReport.ViewLookups
}

// judge decides whether the tx at position pos of txs, a snapshot of the
// old lineage, is valid on the new base after the txs kept before it, and
// records the verdict. The txs are judged in order, each once. Only a
// failed lookup in the new base is an error (and a position out of order,
// which a sync never asks for).
func (c *carrier) judge(txs []Entry, pos int) (bool, error) {
	if pos != len(c.kept) {
		return false, fmt.Errorf("mempool: sync: carrying the tx at position %d after %d", pos, len(c.kept))
	}
	keep, err := c.valid(txs, pos)
	if err != nil {
		return false, err
	}
	c.kept = append(c.kept, keep)
	return keep, nil
}

func (c *carrier) valid(txs []Entry, pos int) (bool, error) {
	tx := txs[pos].Tx
	if tx.TTL != nil && c.slot >= *tx.TTL {
		return false, nil
	}
	if tx.ValidityStart != nil && c.slot < *tx.ValidityStart {
		return false, nil
	}
	for _, in := range tx.Inputs {
		if creator, ok := c.old.idPos(txs[:pos], in.TxID); ok {
			if c.kept[creator] {
				continue
			}
			c.reads++
			_, unspent, err := c.base.Lookup(in)
			if err != nil {
				return false, fmt.Errorf("mempool: sync: looking up input %s of tx %s: %w", in, txName(tx), err)
			}
			if !unspent {
				return false, nil
			}
			continue
		}
		if c.spent(in) {
			return false, nil
		}
	}
	return true, nil
}
