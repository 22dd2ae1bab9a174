package load

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
)

// walkBatch is how many blocks one GET /api/blocks asks for: at a thousand
// txs a block, some 70 kB of hashes each, a batch is a few MB.
const walkBatch = 100

// walkTimeout bounds one GET /api/blocks.
const walkTimeout = 30 * time.Second

// walkAttempts is how many times a walk starts over when the node switches
// to another fork under it before it gives up.
const walkAttempts = 5

// errChainSwitched: the block a batch starts from is not the one the walk
// ended its last batch with.
var errChainSwitched = errors.New("the node switched to another chain during the walk")

// WalkedChain is one node's selected chain as GET /api/blocks gave it,
// oldest block first, and where each tx on it is.
type WalkedChain struct {
	Blocks []apitypes.BlockTxs
	txs    map[[32]byte]txPlace // by tx hash (of the whole tx)
}

// txPlace is where a chain applied a tx: in blocks[block], as one of the
// block's own txs or, viaEB, of the closure it certified.
type txPlace struct {
	block int
	viaEB bool
}

// ChainWalk is one node's answer to the walk: its chain, or why not.
type ChainWalk struct {
	Chain *WalkedChain
	Err   error
}

// WalkChains walks every node's chain at once, in node order.
func WalkChains(ctx context.Context, apis []apiclient.Client) []ChainWalk {
	walks := make([]ChainWalk, len(apis))
	var wg sync.WaitGroup
	for i, a := range apis {
		wg.Go(func() {
			c, err := walkChain(ctx, a)
			walks[i] = ChainWalk{Chain: c, Err: err}
		})
	}
	wg.Wait()
	return walks
}

// walkChain reads a node's whole selected chain, batch by batch, and
// indexes its txs. It starts over when the node switches forks under it.
func walkChain(ctx context.Context, a apiclient.Client) (*WalkedChain, error) {
	for range walkAttempts {
		blocks, err := readChain(ctx, a)
		switch {
		case errors.Is(err, errChainSwitched):
			continue
		case err != nil:
			return nil, err
		}
		return indexChain(blocks)
	}
	return nil, fmt.Errorf("%w, %d times", errChainSwitched, walkAttempts)
}

// readChain reads the chain from block 1 to the tip. Each batch after the
// first starts at the last block read, which must come back with the same
// hash: so the blocks read form one chain even when the node switches forks
// between two batches.
//
// A node ends a batch before the block that would take its answer past its
// bound, so a batch may hold the last block read alone, the next one too
// large to join it (two CertRBs of large closures): then the walk asks from
// the next block, and once it has it, asks for the last block read again,
// which must still be the one it read — so the next block's parent is too.
// Only an empty answer from the next block ends the walk.
func readChain(ctx context.Context, a apiclient.Client) ([]apitypes.BlockTxs, error) {
	var chain []apitypes.BlockTxs
	for {
		from := uint64(1)
		if len(chain) > 0 {
			from = chain[len(chain)-1].Number
		}
		batch, err := a.Blocks(ctx, from, walkBatch)
		if err != nil {
			return nil, err
		}
		if len(chain) > 0 {
			if len(batch) == 0 || batch[0].Hash != chain[len(chain)-1].Hash {
				return nil, errChainSwitched
			}
			if batch = batch[1:]; len(batch) == 0 {
				if batch, err = a.Blocks(ctx, from+1, walkBatch); err != nil {
					return nil, err
				}
				if len(batch) > 0 {
					again, err := a.Blocks(ctx, from, 1)
					if err != nil {
						return nil, err
					}
					if len(again) == 0 || again[0].Hash != chain[len(chain)-1].Hash {
						return nil, errChainSwitched
					}
				}
			}
		}
		if len(batch) == 0 {
			return chain, nil
		}
		for _, b := range batch {
			if want := uint64(len(chain) + 1); b.Number != want {
				return nil, fmt.Errorf("GET /api/blocks?from=%d: block #%d where #%d was due", from, b.Number, want)
			}
			chain = append(chain, b)
		}
	}
}

// indexChain places every tx of the blocks.
func indexChain(blocks []apitypes.BlockTxs) (*WalkedChain, error) {
	c := &WalkedChain{Blocks: blocks, txs: map[[32]byte]txPlace{}}
	add := func(i int, hashes []string, viaEB bool) error {
		for _, h := range hashes {
			var hash [32]byte
			if n, err := hex.Decode(hash[:], []byte(h)); err != nil || n != len(hash) {
				return fmt.Errorf("block #%d: tx hash %q", blocks[i].Number, h)
			}
			c.txs[hash] = txPlace{block: i, viaEB: viaEB}
		}
		return nil
	}
	for i, b := range blocks {
		// A CertRB applies the certified closure, then its own txs.
		if err := add(i, b.Closure, true); err != nil {
			return nil, err
		}
		if err := add(i, b.Txs, false); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Answered are the chains of the walks that succeeded, in node order.
func Answered(walks []ChainWalk) []*WalkedChain {
	var chains []*WalkedChain
	for _, w := range walks {
		if w.Err == nil {
			chains = append(chains, w.Chain)
		}
	}
	return chains
}

// CommonPrefix is the blocks every chain holds: the longest run from block
// 1 with the same hash at each number on all of them.
func CommonPrefix(chains []*WalkedChain) []apitypes.BlockTxs {
	if len(chains) == 0 {
		return nil
	}
	first := chains[0].Blocks
	n := len(first)
	for _, c := range chains[1:] {
		n = min(n, len(c.Blocks))
		for i := range n {
			if c.Blocks[i].Hash != first[i].Hash {
				n = i
				break
			}
		}
	}
	return first[:n]
}
