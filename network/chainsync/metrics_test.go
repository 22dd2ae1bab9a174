package chainsync

import (
	"io"
	"log/slog"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/metricstest"
)

// The service registers its fork status on the registry it is handed, and
// a peer found on a deep fork counts, and strands a node that has no other.
func TestMetricsFollowDeepForks(t *testing.T) {
	reg := prometheus.NewRegistry()
	svc, err := NewService(ServiceOptions{
		Chain:      struct{ NodeChain }{}, // never called: no peer runs
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Registerer: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := metricstest.Values(t, reg)
	if len(got) != 2 || got["leiosnode_deep_forks_total"] != 0 || got["leiosnode_stranded"] != 0 {
		t.Fatalf("before any fork: %v", got)
	}
	tip := block.Tip{Point: block.Point{Slot: 40, Hash: block.Hash{1}}, BlockNumber: 30}
	svc.forks.report(peer.ID("peer-a"), &DeepFork{Theirs: tip})
	got = metricstest.Values(t, reg)
	if got["leiosnode_deep_forks_total"] != 1 || got["leiosnode_stranded"] != 1 {
		t.Fatalf("one peer, on a deep fork: %v", got)
	}
	svc.forks.report(peer.ID("peer-b"), nil)
	if got := metricstest.Values(t, reg); got["leiosnode_deep_forks_total"] != 1 || got["leiosnode_stranded"] != 0 {
		t.Fatalf("a second peer whose chain joins: %v", got)
	}
}
