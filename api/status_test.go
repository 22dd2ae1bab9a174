package api

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/chainsync"
)

func TestForksInStatus(t *testing.T) {
	a, b := peer.ID("peer-a"), peer.ID("peer-b")
	tip := block.Tip{Point: block.Point{Slot: 40, Hash: block.Hash{1}}, BlockNumber: 30}
	forks := chainsync.ForkStatus{DeepForks: 3, Stranded: true, Forked: map[peer.ID]block.Tip{b: tip, a: tip}}
	st := forksStatus(forks)
	if !st.Stranded || st.DeepForks != 3 || len(st.Peers) != 2 || st.Peers[0].ID != a.String() || st.Peers[1].Tip.BlockNumber != 30 {
		t.Fatalf("status %+v", st)
	}
}
