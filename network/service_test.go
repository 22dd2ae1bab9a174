package network_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

// serverOnly is pingService with no client, counting how often the host
// asks it for one.
type serverOnly struct {
	pingService
	calls *atomic.Int64
}

func (svc serverOnly) RunClient(context.Context, *network.Peer) error {
	svc.calls.Add(1)
	return network.ErrNoClient
}

// TestServiceWithoutClientIsNotRestarted: ErrNoClient is asked once per
// connected peer, not retried with backoff like a client that failed.
func TestServiceWithoutClientIsNotRestarted(t *testing.T) {
	var calls atomic.Int64
	a := hosttest.Start(t, 81, nil, func(o *network.HostOptions) {
		o.Services = []network.Service{serverOnly{calls: &calls}}
	})
	hosttest.Start(t, 82, a.P2PAddrs())
	hosttest.Eventually(t, "B connects to A", func() bool { return len(a.Peers()) == 1 })
	time.Sleep(300 * time.Millisecond) // several backoffs of 50 ms
	if n := calls.Load(); n != 1 {
		t.Fatalf("RunClient called %d times for one peer, want 1", n)
	}
}
