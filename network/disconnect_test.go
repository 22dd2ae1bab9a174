package network_test

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

func TestDisconnectBansAtOnce(t *testing.T) {
	a := hosttest.Start(t, 71, nil)
	b := hosttest.Start(t, 72, a.P2PAddrs())
	hosttest.Eventually(t, "B connects to A", func() bool { return len(a.Peers()) == 1 })
	a.Disconnect(b.ID(), "test")
	hosttest.Eventually(t, "A drops B", func() bool { return len(a.Peers()) == 0 })
	time.Sleep(300 * time.Millisecond) // B redials with backoff; A's gater refuses
	if len(a.Peers()) != 0 {
		t.Fatal("a disconnected peer got back in during its ban")
	}
}
