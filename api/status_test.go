package api

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/chainsync"
)

func TestForksInStatusAndMetrics(t *testing.T) {
	a, b := peer.ID("peer-a"), peer.ID("peer-b")
	tip := block.Tip{Point: block.Point{Slot: 40, Hash: block.Hash{1}}, BlockNumber: 30}
	forks := chainsync.ForkStatus{DeepForks: 3, Stranded: true, Forked: map[peer.ID]block.Tip{b: tip, a: tip}}
	reg := prometheus.NewRegistry()
	for _, c := range forkCollectors(func() chainsync.ForkStatus { return forks }) {
		reg.MustRegister(c)
	}
	st := forksStatus(forks)
	if !st.Stranded || st.DeepForks != 3 || len(st.Peers) != 2 || st.Peers[0].ID != a.String() || st.Peers[1].Tip.BlockNumber != 30 {
		t.Fatalf("status %+v", st)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			got[f.GetName()] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	if got["leiosnode_deep_forks_total"] != 3 || got["leiosnode_stranded"] != 1 {
		t.Fatalf("deep forks %v, stranded %v; want 3 and 1", got["leiosnode_deep_forks_total"], got["leiosnode_stranded"])
	}
}
