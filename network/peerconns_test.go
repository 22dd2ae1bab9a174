package network_test

import (
	"testing"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

// TestPeerConnRefusalsCountedOnce: one identity connecting from several
// hosts at once has each connection beyond MaxConnsPerPeer refused, and
// each refusal counted once.
func TestPeerConnRefusalsCountedOnce(t *testing.T) {
	const extra = 4
	first := hosttest.Raw(t, 9)
	victim := hosttest.Start(t, 1, []string{"/ip4/127.0.0.1/tcp/1/p2p/" + first.ID().String()}, func(o *network.HostOptions) {
		o.MaxConnsPerPeer = 1
	})
	if err := hosttest.Connect(t, first, victim); err != nil {
		t.Fatal(err)
	}
	for range extra {
		// Refused once authenticated: the dial may even succeed before
		// the victim closes the connection.
		_ = hosttest.Connect(t, hosttest.Raw(t, 9), victim)
	}
	hosttest.Eventually(t, "the refusals are counted", func() bool {
		return hosttest.Metric(t, victim.Reg, "leiosnode_network_limit_refusals_total", map[string]string{"limit": "peer_conns"}) >= extra
	})
	if got := hosttest.Metric(t, victim.Reg, "leiosnode_network_limit_refusals_total", map[string]string{"limit": "peer_conns"}); got != extra {
		t.Errorf("%v peer_conns refusals counted for %d connections refused", got, extra)
	}
}
