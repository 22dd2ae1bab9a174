package chaindb

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// treeBlock is a generated block of a random block tree.
type treeBlock struct {
	blk       *block.Block
	parent    int // index of the parent, -1 for origin
	badHeader bool
	badBody   bool
}

// genTree draws a random tree of blocks: long runs that extend recent blocks
// (so chains grow past k) mixed with forks off any earlier block (some
// within k of the tip, some beyond), with a few invalid headers and bodies.
func genTree(t *rapid.T, f *forger) []treeBlock {
	n := rapid.IntRange(1, 32).Draw(t, "blocks")
	tree := make([]treeBlock, 0, n)
	for i := range n {
		parent := i - 1
		if i == 0 || rapid.IntRange(0, 9).Draw(t, "fork") < 3 {
			parent = rapid.IntRange(-1, i-1).Draw(t, "parent")
		}
		var ph *block.Header
		if parent >= 0 {
			ph = tree[parent].blk.Header
		}
		tb := treeBlock{parent: parent}
		switch rapid.IntRange(0, 19).Draw(t, "kind") {
		case 0:
			tb.badHeader = true
		case 1:
			tb.badBody = true
		}
		var txs []testTx
		if tb.badBody {
			txs = []testTx{{Spend: []ledger.TxIn{{TxID: [32]byte{0xba, 0xd}}}}}
		}
		tb.blk = f.next(ph, uint64(rapid.IntRange(1, 3).Draw(t, "slotGap")), txs...)
		if tb.badHeader {
			tb.blk = block.NewBlock(block.NewHeader(tb.blk.Header.HeaderBody, newOtherKey()), tb.blk.Body)
		}
		tree = append(tree, tb)
	}
	return tree
}

// genOrder draws a delivery order in which every block comes after its parent.
func genOrder(t *rapid.T, tree []treeBlock) []int {
	delivered := make([]bool, len(tree))
	var order []int
	for len(order) < len(tree) {
		var ready []int
		for i, tb := range tree {
			if !delivered[i] && (tb.parent < 0 || delivered[tb.parent]) {
				ready = append(ready, i)
			}
		}
		i := ready[rapid.IntRange(0, len(ready)-1).Draw(t, "next")]
		delivered[i] = true
		order = append(order, i)
	}
	return order
}

// selectionModel is the specification of chain selection, in terms of
// ancestry: the selected chain as a path of tree indices, the immutable
// tip k blocks behind its end, and the blocks the database has stored.
type selectionModel struct {
	tree     []treeBlock
	k        int
	path     []int // the selected chain, block #1 first
	accepted map[int]bool
}

func (m *selectionModel) number(i int) int { return len(m.ancestors(i)) }

// prefers reports whether the chain ending in i is preferred to the
// selection: longer, or as long with a tip of the same slot (the tests'
// TiebreakSlots is 0) and a lower VRF output; other ties keep the
// selection.
func (m *selectionModel) prefers(i int) bool {
	if n := m.number(i); n != len(m.path) || n == 0 {
		return n > len(m.path)
	}
	tip, h := m.tree[m.path[len(m.path)-1]].blk.Header, m.tree[i].blk.Header
	return h.Slot == tip.Slot && bytes.Compare(h.VRF.Output[:], tip.VRF.Output[:]) < 0
}

// ancestors returns i and its ancestors, i first; none for origin (-1).
func (m *selectionModel) ancestors(i int) []int {
	var out []int
	for ; i >= 0; i = m.tree[i].parent {
		out = append(out, i)
	}
	return out
}

func (m *selectionModel) valid(i int) bool {
	for _, a := range m.ancestors(i) {
		if m.tree[a].badHeader || m.tree[a].badBody {
			return false
		}
	}
	return true
}

// immutable is the index of the immutable tip, -1 for origin.
func (m *selectionModel) immutable() int {
	if len(m.path) <= m.k {
		return -1
	}
	return m.path[len(m.path)-m.k-1]
}

// inVolatileTree: i is the immutable tip, or a stored strict descendant of it.
func (m *selectionModel) inVolatileTree(i int) bool {
	imm := m.immutable()
	if i == imm {
		return true
	}
	if i < 0 || !m.accepted[i] {
		return false
	}
	for _, a := range m.ancestors(i)[1:] {
		if a == imm {
			return true
		}
	}
	return imm == -1
}

func (m *selectionModel) tip() block.Tip {
	if len(m.path) == 0 {
		return block.Tip{Point: block.Origin}
	}
	return tipOf(m.tree[m.path[len(m.path)-1]].blk)
}

func (m *selectionModel) immutableTip() block.Tip {
	if imm := m.immutable(); imm >= 0 {
		return tipOf(m.tree[imm].blk)
	}
	return block.Tip{Point: block.Origin}
}

// deliver checks one AddBlock of block i against the model and advances it.
func (m *selectionModel) deliver(t *rapid.T, db *DB, i int) {
	tb := m.tree[i]
	oldTip := m.tip()
	res, err := db.AddBlock(tb.blk)
	desc := fmt.Sprintf("AddBlock(block %d, #%d, parent %d)", i, m.number(i), tb.parent)

	if tb.parent >= 0 && !m.valid(tb.parent) {
		// Its chain is invalid: refused one way or another, or stored
		// unvalidated; never selected.
		if err != nil && !errors.Is(err, ErrInvalidBlock) && !errors.Is(err, ErrForkTooDeep) && !errors.Is(err, ErrUnknownPredecessor) {
			t.Fatalf("%s: %v", desc, err)
		}
		if res.Adopted || db.Tip() != oldTip {
			t.Fatalf("%s: a block of an invalid chain moved the selection to %s", desc, db.Tip())
		}
		return
	}

	var want error
	adopt := false
	switch {
	case !m.inVolatileTree(tb.parent) && m.number(i) <= m.number(m.immutable()):
		want = ErrForkTooDeep
	case !m.inVolatileTree(tb.parent):
		want = ErrUnknownPredecessor
	case tb.badHeader:
		want = ErrInvalidBlock
	case tb.badBody && m.prefers(i):
		want = ErrInvalidBlock // validated at once, as it would be preferred
	case tb.badBody:
		m.accepted[i] = true // stored, not validated yet
	default:
		m.accepted[i] = true
		adopt = m.prefers(i)
	}
	if (want == nil) != (err == nil) || !errors.Is(err, want) {
		t.Fatalf("%s = %v, want %v", desc, err, want)
	}
	rolledBack := 0
	if adopt {
		newPath := m.ancestors(i)
		for l, r := 0, len(newPath)-1; l < r; l, r = l+1, r-1 {
			newPath[l], newPath[r] = newPath[r], newPath[l]
		}
		common := 0
		for common < len(m.path) && m.path[common] == newPath[common] {
			common++
		}
		rolledBack = len(m.path) - common
		if rolledBack > m.k {
			t.Fatalf("%s: the model rolls back %d > k", desc, rolledBack)
		}
		m.path = newPath
	}
	want2 := AddResult{Adopted: adopt, Tip: m.tip(), RolledBack: rolledBack}
	if res != want2 {
		t.Fatalf("%s = %+v, want %+v", desc, res, want2)
	}
	if db.Tip() != m.tip() || db.ImmutableTip() != m.immutableTip() {
		t.Fatalf("%s: tip %s immutable %s, model %s %s", desc, db.Tip(), db.ImmutableTip(), m.tip(), m.immutableTip())
	}
}

// TestChainSelectionModel: random block trees (forks within and beyond k,
// invalid headers and bodies) delivered in random orders; after every block
// the selection is the model's: the longest valid chain reachable, a tie of
// one slot going to the lower VRF output and other ties keeping the
// earlier, never a rollback deeper than k.
func TestChainSelectionModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 4).Draw(t, "k")
		tree := genTree(t, newForger())
		order := genOrder(t, tree)
		db := mustOpen(t, "db", testOptions(k, testGenesis(1), vfs.NewMem()))
		defer db.Close()
		m := &selectionModel{tree: tree, k: k, accepted: map[int]bool{}}
		for _, i := range order {
			m.deliver(t, db, i)
		}
		chain := checkChain(t, db)
		for j, b := range chain {
			if b.Hash() != tree[m.path[j]].blk.Hash() {
				t.Fatalf("selected block #%d differs from the model", j+1)
			}
		}
	})
}

// TestVRFTiebreak: of two chains of one length, the one whose tip has the
// lower VRF output wins when the tips are at most TiebreakSlots apart;
// farther apart, or with a higher output, the selection stays.
func TestVRFTiebreak(t *testing.T) {
	opts := testOptions(4, testGenesis(1), vfs.NewMem())
	opts.TiebreakSlots = 1
	db := mustOpen(t, "db", opts)
	defer db.Close()
	f := newForger()
	withVRF := func(vrf, slot uint64) *block.Block { f.nonce = vrf - 1; return f.next(nil, slot) }
	a := withVRF(50, 5)
	for _, step := range []struct {
		name  string
		blk   *block.Block
		moved bool
	}{
		{"the first block", a, true},
		{"a lower output a slot later", withVRF(10, 6), true},
		{"a higher output in the same slot", withVRF(20, 6), false},
		{"a lower output two slots away", withVRF(1, 8), false},
	} {
		res, err := db.AddBlock(step.blk)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if res.Adopted != step.moved || step.moved && db.Tip() != tipOf(step.blk) {
			t.Errorf("%s: adopted %v, tip %s", step.name, res.Adopted, db.Tip())
		}
	}
}
