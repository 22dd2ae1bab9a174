package node

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// abandonedTxs is the mempool's Options.Abandoned: the txs of the blocks
// the chain no longer holds since old was its tip, oldest block first, each
// block's txs in the order the ledger applied them — a CertRB's certified
// closure first, from the LeiosDB —, less those the blocks that replaced
// them hold too. In a slot battle both leaders certify the same EB: giving
// back its closure, thousands of txs already on the winning chain, had
// every node refuse them one by one just after its switch, when the next
// EB's vote is due.
func (p *parts) abandonedTxs(old block.Tip) ([]*ledger.Tx, error) {
	blocks, err := p.chain.Abandoned(old)
	if err != nil || len(blocks) == 0 {
		return nil, err
	}
	var intersection *block.Header
	if first := blocks[0].Header; first.PrevHash != nil {
		if blk, err := p.chain.Block(first.Prev()); err == nil {
			intersection = blk.Header
		}
	}
	kept := p.heldSince(blocks[0].Header.BlockNumber, intersection)
	var txs []*ledger.Tx
	add := func(raw []byte) {
		tx, err := ledger.DecodeTx(raw) // it passed the ledger once; decoding hashes it
		if err != nil {
			return
		}
		if _, ok := kept.txs[block.Hash(tx.Hash())]; !ok {
			txs = append(txs, tx)
		}
	}
	parent := intersection
	for _, blk := range blocks {
		if pt, ok := consensus.CertifiedPoint(blk, parent); ok {
			if _, ok := kept.closures[pt]; !ok {
				closure, held, err := p.leios.Closure(pt)
				if err != nil || !held {
					p.log.Warn("rollback: the closure of an abandoned CertRB is gone; its txs do not return", "point", pt, "err", err)
				}
				for _, raw := range closure {
					add(raw)
				}
			}
		}
		for _, raw := range blk.Body.Txs {
			add(raw)
		}
		parent = blk.Header
	}
	return txs, nil
}

// heldOnChain is what the selected chain's blocks from some number on
// hold: the closures they certify and their own txs.
type heldOnChain struct {
	closures map[block.Point]struct{}
	txs      map[block.Hash]struct{}
}

// heldSince reads what the selected chain holds from block number from on,
// parent being the header of the block before it; it stops early, holding
// less, if the selection moves meanwhile.
func (p *parts) heldSince(from uint64, parent *block.Header) heldOnChain {
	held := heldOnChain{closures: map[block.Point]struct{}{}, txs: map[block.Hash]struct{}{}}
	for n := from; ; n++ {
		blk, err := p.chain.BlockByNumber(n)
		if err != nil || parent != nil && blk.Header.Prev() != parent.Hash() {
			return held
		}
		if pt, ok := consensus.CertifiedPoint(blk, parent); ok {
			held.closures[pt] = struct{}{}
		}
		for _, raw := range blk.Body.Txs {
			held.txs[block.HashBytes(raw)] = struct{}{}
		}
		parent = blk.Header
	}
}
