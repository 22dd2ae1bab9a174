package node

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// abandonedTxs is the mempool's Options.Abandoned: the txs of the blocks
// the chain no longer holds since old was its tip, oldest block first, each
// block's txs in the order the ledger applied them.
func (n *Node) abandonedTxs(old block.Tip) ([]*ledger.Tx, error) {
	blocks, err := n.chain.Abandoned(old)
	if err != nil {
		return nil, err
	}
	var txs []*ledger.Tx
	for _, blk := range blocks {
		for _, raw := range blk.Body.Txs {
			if tx, err := ledger.DecodeTx(raw); err == nil { // it passed the ledger once
				txs = append(txs, tx)
			}
		}
	}
	return txs, nil
}
