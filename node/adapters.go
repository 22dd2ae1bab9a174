package node

import (
	"errors"
	"sync/atomic"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/network"
)

// chainAdapter presents the chain database as network.Chain: Go matches
// method signatures exactly, and chaindb returns its own concrete types.
type chainAdapter struct {
	db      *chaindb.DB
	adopted *atomic.Uint64
}

func (a chainAdapter) Tip() block.Tip          { return a.db.Tip() }
func (a chainAdapter) ImmutableTip() block.Tip { return a.db.ImmutableTip() }
func (a chainAdapter) FindIntersect(points []block.Point) (block.Point, bool) {
	return a.db.FindIntersect(points)
}
func (a chainAdapter) NewFollower(from block.Point) (network.Follower, error) {
	return a.db.NewFollower(from)
}
func (a chainAdapter) BlockRange(from, to block.Point) ([]*block.Block, error) {
	return a.db.BlockRange(from, to)
}
func (a chainAdapter) BlockByNumber(n uint64) (*block.Block, error) { return a.db.BlockByNumber(n) }
func (a chainAdapter) AddBlock(blk *block.Block) error {
	res, err := a.db.AddBlock(blk)
	if res.Adopted {
		a.adopted.Add(1)
	}
	return err
}

// forgeChain counts the forge's adopted blocks with the synced ones.
type forgeChain struct {
	db      *chaindb.DB
	adopted *atomic.Uint64
}

func (c forgeChain) TipLedger() (*chaindb.LedgerView, block.Tip) { return c.db.TipLedger() }
func (c forgeChain) AddBlock(blk *block.Block) (chaindb.AddResult, error) {
	res, err := c.db.AddBlock(blk)
	if res.Adopted {
		c.adopted.Add(1)
	}
	return res, err
}

// isInvalidBlock tells a peer's fault (a block that fails validation, or a
// fork deeper than k that an honest peer would not serve) from a local one.
func isInvalidBlock(err error) bool {
	for _, sentinel := range []error{
		chaindb.ErrInvalidBlock, chaindb.ErrForkTooDeep, chaindb.ErrUnknownPredecessor,
		consensus.ErrUnknownIssuer, consensus.ErrWrongVRFKey, consensus.ErrBadVRFProof,
		consensus.ErrNotLeader, consensus.ErrFutureSlot, consensus.ErrBodyTooLarge,
		block.ErrBadSignature, block.ErrBodyMismatch,
	} {
		if errors.Is(err, sentinel) {
			return true
		}
	}
	return false
}
