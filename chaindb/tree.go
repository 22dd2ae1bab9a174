package chaindb

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// node is a block of the volatile tree: the immutable tip (the root) and
// every stored block that descends from it.
type node struct {
	hash   block.Hash
	number uint64
	slot   uint64
	header *block.Header // nil for the root at origin

	// parent and children give the tree's shape; AddBlock (under DB.addMu)
	// and Abandoned (under DB.mu, shared) read them, and AddBlock changes
	// them under DB.mu too.
	parent   *node
	children []*node

	// diff is the block's ledger diff while the block is on the selected
	// chain after the root, nil otherwise, and created the outputs it
	// created by address (the address index's volatile part, address.go).
	// Published diffs and their indexes are never mutated.
	diff    *ledger.Diff
	created map[string][]ledger.TxIn
}

// setDiff gives n the diff of its block and that diff's outputs by
// address; nil, nil when n leaves the selection or becomes immutable.
func (n *node) setDiff(d *ledger.Diff, created map[string][]ledger.TxIn) {
	n.diff, n.created = d, created
}

func newNode(h *block.Header) *node {
	return &node{hash: h.Hash(), number: h.BlockNumber, slot: h.Slot, header: h}
}

// point is the node's point; the root at origin is block.Origin.
func (n *node) point() block.Point {
	if n.header == nil {
		return block.Origin
	}
	return n.header.Point()
}

func (n *node) tip() block.Tip { return block.Tip{Point: n.point(), BlockNumber: n.number} }

// subtree returns n and all its descendants, parents before children.
func (n *node) subtree() []*node {
	out := []*node{n}
	for i := 0; i < len(out); i++ {
		out = append(out, out[i].children...)
	}
	return out
}

// detach removes n from its parent's children.
func (n *node) detach() {
	if n.parent == nil {
		return
	}
	kids := n.parent.children
	for i, c := range kids {
		if c == n {
			n.parent.children = append(kids[:i:i], kids[i+1:]...)
			break
		}
	}
	n.parent = nil
}

// attach makes n a child of parent.
func (n *node) attach(parent *node) {
	n.parent = parent
	parent.children = append(parent.children, n)
}
