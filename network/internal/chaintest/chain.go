package chaintest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/chainsync"
)

var (
	// ErrInvalid is wrapped by AddBlock's errors for blocks that are invalid.
	ErrInvalid = errors.New("chaintest: invalid block")
	// ErrUnknownParent is returned for a block whose parent is not stored.
	ErrUnknownParent = errors.New("chaintest: unknown parent")
	// ErrNotFound is returned for points and numbers not stored.
	ErrNotFound = errors.New("chaintest: not found")
)

// Chain stores blocks and selects the longest chain among them.
type Chain struct {
	k int

	mu       sync.Mutex // guards everything below
	blocks   map[block.Hash]*block.Block
	selected []*block.Block // selected[i] has block number i+1
	changed  chan struct{}  // closed and replaced when the selection changes
}

// New returns an empty chain whose immutable tip is k blocks behind its tip.
func New(k int) *Chain {
	return &Chain{k: k, blocks: make(map[block.Hash]*block.Block), changed: make(chan struct{})}
}

// Tip is the selected chain's last block.
func (c *Chain) Tip() block.Tip {
	c.mu.Lock()
	defer c.mu.Unlock()
	return tipOf(c.selected)
}

// ImmutableTip is the selected block k blocks behind the tip.
func (c *Chain) ImmutableTip() block.Tip {
	c.mu.Lock()
	defer c.mu.Unlock()
	return tipOf(c.selected[:max(0, len(c.selected)-c.k)])
}

func tipOf(chain []*block.Block) block.Tip {
	if len(chain) == 0 {
		return block.Tip{Point: block.Origin}
	}
	last := chain[len(chain)-1]
	return block.Tip{Point: last.Point(), BlockNumber: last.Header.BlockNumber}
}

// FindIntersect returns the first of points on the selected chain.
func (c *Chain) FindIntersect(points []block.Point) (block.Point, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range points {
		if p.IsOrigin() {
			return p, true
		}
		if b, ok := c.blocks[p.Hash]; ok && b.Point() == p && c.onSelected(b) {
			return p, true
		}
	}
	return block.Point{}, false
}

// BlockByNumber returns selected block n.
func (c *Chain) BlockByNumber(n uint64) (*block.Block, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n == 0 || n > uint64(len(c.selected)) {
		return nil, fmt.Errorf("%w: block number %d", ErrNotFound, n)
	}
	return c.selected[n-1], nil
}

// BlockRange returns the blocks from..to, on any stored branch, oldest first.
func (c *Chain) BlockRange(from, to block.Point) ([]*block.Block, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var blocks []*block.Block
	for b := c.blocks[to.Hash]; b != nil; b = c.blocks[b.Header.Prev()] {
		blocks = append(blocks, b)
		if b.Point() == from {
			for i, j := 0, len(blocks)-1; i < j; i, j = i+1, j-1 {
				blocks[i], blocks[j] = blocks[j], blocks[i]
			}
			return blocks, nil
		}
	}
	return nil, fmt.Errorf("%w: range %s..%s", ErrNotFound, from, to)
}

// AddBlock checks b (body against header, signature, parent, number, slot),
// stores it and selects the longest chain. A block already stored is
// accepted again.
func (c *Chain) AddBlock(b *block.Block) error {
	if err := b.CheckBody(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := b.Header.VerifySignature(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return c.add(b, true)
}

// AddUnchecked stores and selects b without validating it (only its parent
// must be stored): how a test builds a peer that serves invalid blocks.
func (c *Chain) AddUnchecked(b *block.Block) error { return c.add(b, false) }

func (c *Chain) add(b *block.Block, validate bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := b.Header
	if _, ok := c.blocks[b.Hash()]; ok {
		return nil
	}
	var parentNumber, parentSlot uint64
	if h.PrevHash != nil {
		parent, ok := c.blocks[*h.PrevHash]
		if !ok {
			return fmt.Errorf("%w: block %d prev %s", ErrUnknownParent, h.BlockNumber, h.PrevHash.Short())
		}
		parentNumber, parentSlot = parent.Header.BlockNumber, parent.Header.Slot
	}
	if validate && (h.BlockNumber != parentNumber+1 || (h.PrevHash != nil && h.Slot <= parentSlot)) {
		return fmt.Errorf("%w: block %d slot %d after block %d slot %d", ErrInvalid, h.BlockNumber, h.Slot, parentNumber, parentSlot)
	}
	c.blocks[b.Hash()] = b
	if h.BlockNumber > uint64(len(c.selected)) {
		c.switchTo(b)
	}
	return nil
}

// switchTo selects the chain ending in b if it forks off at most k blocks
// back. mu is held.
func (c *Chain) switchTo(b *block.Block) {
	var branch []*block.Block
	x := b
	for x != nil && !c.onSelected(x) {
		branch = append(branch, x)
		x = c.blocks[x.Header.Prev()]
	}
	forkNumber := 0
	if x != nil {
		forkNumber = int(x.Header.BlockNumber)
	}
	if len(c.selected)-forkNumber > c.k {
		return
	}
	c.selected = c.selected[:forkNumber]
	for i := len(branch) - 1; i >= 0; i-- {
		c.selected = append(c.selected, branch[i])
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// onSelected reports whether b is on the selected chain. mu is held.
func (c *Chain) onSelected(b *block.Block) bool {
	n := b.Header.BlockNumber
	return n >= 1 && n <= uint64(len(c.selected)) && c.selected[n-1].Hash() == b.Hash()
}

// NewFollower follows the selected chain from a stored point or the origin.
func (c *Chain) NewFollower(from block.Point) (chainsync.Follower, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &follower{c: c}
	if !from.IsOrigin() {
		b, ok := c.blocks[from.Hash]
		if !ok || b.Point() != from {
			return nil, fmt.Errorf("%w: follower start %s", ErrNotFound, from)
		}
		f.cur = b
	}
	return f, nil
}

// follower is a position on some stored branch; each step moves it one
// block forward on the selected chain, or back to the selected chain.
type follower struct {
	c   *Chain
	cur *block.Block // nil: the origin
}

func (f *follower) TryNext() (block.ChainUpdate, bool, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	u, ok, _ := f.step()
	return u, ok, nil
}

func (f *follower) Next(ctx context.Context) (block.ChainUpdate, error) {
	for {
		f.c.mu.Lock()
		u, ok, changed := f.step()
		f.c.mu.Unlock()
		if ok {
			return u, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return block.ChainUpdate{}, ctx.Err()
		}
	}
}

func (f *follower) Close() {}

// step returns the next update, or the channel that closes when there may
// be one. The chain's mu is held.
func (f *follower) step() (block.ChainUpdate, bool, <-chan struct{}) {
	c := f.c
	if f.cur != nil && !c.onSelected(f.cur) {
		for f.cur != nil && !c.onSelected(f.cur) {
			f.cur = c.blocks[f.cur.Header.Prev()]
		}
		p := block.Origin
		if f.cur != nil {
			p = f.cur.Point()
		}
		return block.ChainUpdate{Kind: block.RollBackward, Point: p}, true, nil
	}
	var n uint64
	if f.cur != nil {
		n = f.cur.Header.BlockNumber
	}
	if n < uint64(len(c.selected)) {
		f.cur = c.selected[n]
		return block.ChainUpdate{Kind: block.RollForward, Header: f.cur.Header}, true, nil
	}
	return block.ChainUpdate{}, false, c.changed
}
