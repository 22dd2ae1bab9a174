package node

import (
	"sync"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
)

// txCounter counts the txs of the selected chain for /status, from a
// cumulative count per block hash: a new tip costs the blocks since the last
// counted one, a rollback costs nothing.
type txCounter struct {
	chain *chaindb.DB

	mu         sync.Mutex // guards cumulative
	cumulative map[block.Hash]uint64
}

func newTxCounter(chain *chaindb.DB) *txCounter {
	return &txCounter{chain: chain, cumulative: map[block.Hash]uint64{}}
}

// onChain returns the number of txs from origin to the selected tip.
func (c *txCounter) onChain() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	tip := c.chain.Tip()
	// Walk back to a counted block (or origin), then count forward.
	var pending []*block.Block
	var base uint64
	for hash := tip.Point.Hash; !hash.IsZero(); {
		if n, ok := c.cumulative[hash]; ok {
			base = n
			break
		}
		blk, err := c.chain.Block(hash)
		if err != nil {
			return 0 // the block left the store under us; the next poll retries
		}
		pending = append(pending, blk)
		hash = blk.Header.Prev()
	}
	for i := len(pending) - 1; i >= 0; i-- {
		base += uint64(len(pending[i].Body.Txs))
		c.cumulative[pending[i].Hash()] = base
	}
	c.prune()
	return base
}

// prune bounds the map: past a few thousand entries it keeps only the
// immutable tip's count, which every later tip descends from.
func (c *txCounter) prune() {
	const maxEntries = 8192
	if len(c.cumulative) <= maxEntries {
		return
	}
	immutable := c.chain.ImmutableTip().Point.Hash
	kept, ok := c.cumulative[immutable]
	clear(c.cumulative)
	if ok {
		c.cumulative[immutable] = kept
	}
}
