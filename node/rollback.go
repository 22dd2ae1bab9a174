package node

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// abandonedTxs is the mempool's Options.Abandoned: the txs of the blocks
// the chain no longer holds since old was its tip, oldest block first, each
// block's txs in the order the ledger applied them — a CertRB's certified
// closure first, from the LeiosDB.
func (p *parts) abandonedTxs(old block.Tip) ([]*ledger.Tx, error) {
	blocks, err := p.chain.Abandoned(old)
	if err != nil || len(blocks) == 0 {
		return nil, err
	}
	var parent *block.Header
	if first := blocks[0].Header; first.PrevHash != nil {
		if blk, err := p.chain.Block(first.Prev()); err == nil {
			parent = blk.Header
		}
	}
	var txs []*ledger.Tx
	add := func(raw []byte) {
		if tx, err := ledger.DecodeTx(raw); err == nil { // it passed the ledger once
			txs = append(txs, tx)
		}
	}
	for _, blk := range blocks {
		if pt, ok := consensus.CertifiedPoint(blk, parent); ok {
			closure, held, err := p.leios.Closure(pt)
			if err != nil || !held {
				p.log.Warn("rollback: the closure of an abandoned CertRB is gone; its txs do not return", "point", pt, "err", err)
			}
			for _, raw := range closure {
				add(raw)
			}
		}
		for _, raw := range blk.Body.Txs {
			add(raw)
		}
		parent = blk.Header
	}
	return txs, nil
}
