package network_test

import (
	"testing"
	"time"
)

func TestDisconnectBansAtOnce(t *testing.T) {
	a := startNode(t, 71, nil, nil)
	b := startNode(t, 72, nil, a.P2PAddrs())
	eventually(t, "B connects to A", func() bool { return len(a.Peers()) == 1 })
	a.Disconnect(b.ID(), "test")
	eventually(t, "A drops B", func() bool { return len(a.Peers()) == 0 })
	time.Sleep(300 * time.Millisecond) // B redials with backoff; A's gater refuses
	if len(a.Peers()) != 0 {
		t.Fatal("a disconnected peer got back in during its ban")
	}
}
