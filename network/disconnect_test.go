package network_test

import (
	"testing"

	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

// A peer disconnected with a ban is refused at once: B, whose topology
// names A, redials — A's gater counts each refusal — and never gets back
// in during its ban.
func TestDisconnectBansAtOnce(t *testing.T) {
	a := hosttest.Start(t, 71, nil)
	b := hosttest.Start(t, 72, a.P2PAddrs())
	hosttest.Eventually(t, "B connects to A", func() bool { return len(a.Peers()) == 1 })
	a.Disconnect(b.ID(), "test")
	hosttest.Eventually(t, "A drops B", func() bool { return len(a.Peers()) == 0 })
	hosttest.Eventually(t, "A refuses two redials of B", func() bool {
		if len(a.Peers()) != 0 {
			t.Fatal("a disconnected peer got back in during its ban")
		}
		return hosttest.Metric(t, a.Reg, "leiosnode_network_refused_connections_total", nil) >= 2
	})
}
