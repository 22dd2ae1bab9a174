package chainsync

import (
	"context"

	"github.com/leiosnode/leiosnode/block"
)

// Chain is the selected chain a server serves.
type Chain interface {
	Tip() block.Tip
	// FindIntersect returns the first of points on the selected chain.
	FindIntersect(points []block.Point) (block.Point, bool)
	// NewFollower follows the selected chain from the point from.
	NewFollower(from block.Point) (Follower, error)
}

// Follower walks the selected chain and reports its changes in order.
type Follower interface {
	// Next blocks until there is an update.
	Next(ctx context.Context) (block.ChainUpdate, error)
	// TryNext returns the next update, or ok=false at the tip.
	TryNext() (update block.ChainUpdate, ok bool, err error)
	Close()
}

// LocalChain is the chain a client syncs into.
type LocalChain interface {
	Tip() block.Tip
	ImmutableTip() block.Tip
	// BlockByNumber returns the selected chain's block n (n ≥ 1).
	BlockByNumber(n uint64) (*block.Block, error)
	// AddBlock validates, stores and selects; it returns an error when the
	// block is invalid.
	AddBlock(blk *block.Block) error
}

// NodeChain is the node's own chain, which a Service both serves to peers
// and syncs into from them.
type NodeChain interface {
	Chain
	LocalChain
}
