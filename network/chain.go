package network

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/chainsync"
)

// Chain is the chain database as the network uses it: served to peers by
// chain sync and block fetch, and the sink of blocks synced from them.
type Chain interface {
	Tip() block.Tip
	ImmutableTip() block.Tip
	FindIntersect(points []block.Point) (block.Point, bool)
	NewFollower(from block.Point) (Follower, error)
	BlockRange(from, to block.Point) ([]*block.Block, error)
	// BlockByNumber returns the selected chain's block n, for the points a
	// chain-sync client offers.
	BlockByNumber(n uint64) (*block.Block, error)
	// AddBlock validates, stores and selects; it returns an error wrapping a
	// sentinel when the block is invalid.
	AddBlock(blk *block.Block) error
}

// Follower follows the selected chain (see chainsync.Follower).
type Follower = chainsync.Follower
