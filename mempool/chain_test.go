package mempool

import (
	"encoding/binary"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// testChain is an in-memory chain in chaindb's shape, for the tests that
// need forks (the mempool may not import chaindb): blocks of real txs
// applied as the node applies them (ledger.ApplyTxs, one diff a block), the
// selected chain (the longest; a tie keeps the selection), an immutable tip
// k blocks behind whose UTxO is the backing store, and the selected
// blocks' diffs after it. A view is the backing store of its moment plus
// the diffs to its point, with their points, and answers SpentSince as
// chaindb's LedgerView does. Each block also keeps the model: its UTxO
// replayed tx by tx on a plain map.
type testChain struct {
	mu       sync.Mutex
	k        int
	root     *chainBlock   // the immutable tip
	selected []*chainBlock // after root, oldest first
	blocks   map[block.Hash]*chainBlock
	changed  chan struct{}
	open     atomic.Int64 // views not released
	minted   uint64       // block hashes handed out
}

type chainBlock struct {
	tip    block.Tip
	parent *chainBlock
	txs    []*ledger.Tx
	diff   *ledger.Diff
	utxo   ledger.MapUTxO // the model after the block; never mutated once set
}

func newTestChain(k int, genesis ledger.MapUTxO) *testChain {
	root := &chainBlock{tip: block.Tip{Point: block.Origin}, utxo: genesis}
	return &testChain{k: k, root: root, blocks: map[block.Hash]*chainBlock{{}: root}, changed: make(chan struct{})}
}

// tip is the selected chain's last block.
func (c *testChain) tip() *chainBlock {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tipLocked()
}

func (c *testChain) tipLocked() *chainBlock {
	if len(c.selected) == 0 {
		return c.root
	}
	return c.selected[len(c.selected)-1]
}

// volatile returns the immutable tip and the selected blocks after it: the
// blocks a fork may start from.
func (c *testChain) volatile() []*chainBlock {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*chainBlock{c.root}, c.selected...)
}

// onSelected reports whether the block at p is the immutable tip or a
// selected block after it: the points a view can answer SpentSince for.
func (c *testChain) onSelected(p block.Point) bool {
	for _, b := range c.volatile() {
		if b.tip.Point == p {
			return true
		}
	}
	return false
}

// add makes the block after parent, slotGap slots later, holding txs,
// which must be valid there; it selects it if it makes the chain longer.
func (c *testChain) add(parent *chainBlock, slotGap uint64, txs []*ledger.Tx) (*chainBlock, error) {
	slot := parent.tip.Point.Slot + slotGap
	raws := make([][]byte, len(txs))
	for i, tx := range txs {
		raws[i] = tx.Bytes()
	}
	d, err := ledger.ApplyTxs(params, parent.utxo, slot, raws, false)
	if err != nil {
		return nil, fmt.Errorf("test chain: block after %s: %w", parent.tip, err)
	}
	model := maps.Clone(parent.utxo)
	for _, tx := range txs {
		step, err := ledger.Reapply(params, model, slot, tx)
		if err != nil {
			return nil, fmt.Errorf("test chain: model: %w", err)
		}
		applyDiff(model, step)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.minted++
	var h block.Hash
	binary.BigEndian.PutUint64(h[:], c.minted)
	b := &chainBlock{
		tip:    block.Tip{Point: block.Point{Slot: slot, Hash: h}, BlockNumber: parent.tip.BlockNumber + 1},
		parent: parent, txs: txs, diff: d, utxo: model,
	}
	c.blocks[h] = b
	if b.tip.BlockNumber <= c.tipLocked().tip.BlockNumber {
		return b, nil
	}
	// Switch: the selection is the path from the root to b.
	var path []*chainBlock
	for x := b; x != c.root; x = x.parent {
		if x == nil {
			return nil, fmt.Errorf("test chain: block %s forks off before the immutable tip", b.tip)
		}
		path = append(path, x)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	c.selected = path
	for len(c.selected) > c.k { // flush: the backing store moves on
		c.root, c.selected = c.selected[0], c.selected[1:]
	}
	close(c.changed)
	c.changed = make(chan struct{})
	return b, nil
}

func (c *testChain) TipLedger() (ledger.UTxO, block.Tip, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := &chainView{base: c.root.utxo, root: c.root.tip.Point}
	for _, b := range c.selected {
		v.diffs = append(v.diffs, b.diff)
		v.points = append(v.points, b.tip.Point)
	}
	c.open.Add(1)
	var once sync.Once
	return v, c.tipLocked().tip, func() {
		once.Do(func() {
			v.released.Store(true)
			c.open.Add(-1)
		})
	}, nil
}

func (c *testChain) TipChanged() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Abandoned is chaindb's: the txs of the blocks of the chain ending at old
// that the selected chain no longer holds, oldest block first.
func (c *testChain) Abandoned(old block.Tip) ([]*ledger.Tx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	on := map[*chainBlock]bool{c.root: true}
	for _, b := range c.selected {
		on[b] = true
	}
	var lost []*chainBlock
	for b := c.blocks[old.Point.Hash]; b != nil && !on[b]; b = b.parent {
		lost = append(lost, b)
	}
	var txs []*ledger.Tx
	for i := len(lost) - 1; i >= 0; i-- {
		txs = append(txs, lost[i].txs...)
	}
	return txs, nil
}

// chainView is a testChain's view: chaindb's LedgerView in miniature.
type chainView struct {
	base     ledger.MapUTxO
	root     block.Point
	diffs    []*ledger.Diff
	points   []block.Point
	released atomic.Bool
}

func (v *chainView) Lookup(in ledger.TxIn) (ledger.TxOut, bool, error) {
	if v.released.Load() {
		return ledger.TxOut{}, false, errReleased
	}
	return ledger.Overlay{Base: v.base, Diffs: v.diffs}.Lookup(in)
}

func (v *chainView) SpentSince(p block.Point) (func(ledger.TxIn) bool, bool) {
	if v.released.Load() {
		return nil, false
	}
	after := v.diffs
	if p != v.root {
		i := len(v.points) - 1
		for i >= 0 && v.points[i] != p {
			i--
		}
		if i < 0 {
			return nil, false
		}
		after = v.diffs[i+1:]
	}
	return func(in ledger.TxIn) bool {
		for _, d := range after {
			if _, ok := d.Deletes[in]; ok {
				return true
			}
		}
		return false
	}, true
}
