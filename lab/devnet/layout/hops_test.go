package layout

import (
	"slices"
	"testing"
)

// Hops follow the links either way; a node without a path is -1 away.
func TestHops(t *testing.T) {
	d := &Layout{Nodes: make([]Node, 4), Links: []Link{{From: 0, To: 1}, {From: 2, To: 1}}}
	want := [][]int{{0, 1, 2, -1}, {1, 0, 1, -1}, {2, 1, 0, -1}, {-1, -1, -1, 0}}
	got := d.Hops()
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("hops from node %d: %v, want %v", i, got[i], want[i])
		}
	}
	if (&Layout{Nodes: make([]Node, 2)}).Hops() != nil {
		t.Error("hops of a devnet without laid-out links")
	}
}
