package mempool

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// awaiting holds the txs refused only for inputs that may yet come
// (inputMayYetCome): a child that reached the node before its parent —
// the parent dropped by a rollback's sync until its giveBack, or refused
// for room —, which no peer offers again. Each is tried again once a tx
// that creates what it lacked is admitted (admitAwaitingLocked), or once
// a sync brings a tip whose UTxO has it (the parent on chain). At most
// limit txs and limitBytes bytes are held, the oldest forgotten first. The
// add lock guards it.
type awaiting struct {
	limit, limitBytes int
	bytes             int
	order             []block.Hash              // oldest first; entries no longer in txs are skipped
	txs               map[block.Hash]awaitingTx // by tx hash
	byParent          map[[32]byte][]block.Hash // the tx id of a missing input → the txs awaiting it
}

type awaitingTx struct {
	tx      *ledger.Tx
	missing []ledger.TxIn
}

func newAwaiting(limit, limitBytes int) *awaiting {
	return &awaiting{limit: limit, limitBytes: limitBytes, txs: map[block.Hash]awaitingTx{}, byParent: map[[32]byte][]block.Hash{}}
}

// hold keeps tx until what it misses comes. A tx larger than the whole
// bound is not kept.
func (a *awaiting) hold(tx *ledger.Tx, missing []ledger.TxIn) {
	h := tx.Hash()
	if _, ok := a.txs[h]; ok || tx.Size() > a.limitBytes || len(missing) == 0 {
		return
	}
	for len(a.txs) >= a.limit || a.bytes+tx.Size() > a.limitBytes {
		a.forget(a.order[0])
		a.order = a.order[1:]
	}
	a.txs[h] = awaitingTx{tx: tx, missing: missing}
	a.bytes += tx.Size()
	a.order = append(a.order, h)
	for _, in := range missing {
		a.byParent[in.TxID] = append(a.byParent[in.TxID], h)
	}
}

// forget drops the tx h, if held. Its hash stays in order until it reaches
// the front, and in byParent until its parent comes: both are skipped then.
func (a *awaiting) forget(h block.Hash) {
	if w, ok := a.txs[h]; ok {
		delete(a.txs, h)
		a.bytes -= w.tx.Size()
	}
}

// childrenOf takes out the txs awaiting an output of the tx with id
// parent, oldest first.
func (a *awaiting) childrenOf(parent [32]byte) []*ledger.Tx {
	var out []*ledger.Tx
	for _, h := range a.byParent[parent] {
		if w, ok := a.txs[h]; ok {
			out = append(out, w.tx)
			a.forget(h)
		}
	}
	delete(a.byParent, parent)
	a.compact()
	return out
}

// found takes out the txs, oldest first, that now find every input they
// missed in utxo.
func (a *awaiting) found(utxo ledger.UTxO) []*ledger.Tx {
	var out []*ledger.Tx
	for _, h := range a.order {
		w, ok := a.txs[h]
		if !ok {
			continue
		}
		all := true
		for _, in := range w.missing {
			if _, ok, err := utxo.Lookup(in); err != nil || !ok {
				all = false
				break
			}
		}
		if all {
			out = append(out, w.tx)
			a.forget(h)
		}
	}
	a.compact()
	return out
}

// compact drops from order the hashes no longer held once they are most of
// it, so order stays within a small multiple of the txs held.
func (a *awaiting) compact() {
	if len(a.order) <= 2*len(a.txs)+16 {
		return
	}
	kept := a.order[:0]
	for _, h := range a.order {
		if _, ok := a.txs[h]; ok {
			kept = append(kept, h)
		}
	}
	a.order = kept
	for parent, hs := range a.byParent {
		live := hs[:0]
		for _, h := range hs {
			if _, ok := a.txs[h]; ok {
				live = append(live, h)
			}
		}
		if len(live) == 0 {
			delete(a.byParent, parent)
		} else {
			a.byParent[parent] = live
		}
	}
}
