package network_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
	"github.com/leiosnode/leiosnode/network/internal/ping"
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

// speaker is pingService's client as a versioned service has it: it asks
// the peer which protocol it speaks (Peer.Speaks), takes "none" for good
// (ErrNoClient), and counts the attempts and the pings that went through.
type speaker struct {
	pingService
	attempts, pinged *atomic.Int64
}

func (svc speaker) RunClient(ctx context.Context, p *network.Peer) error {
	svc.attempts.Add(1)
	spec, err := p.Speaks(ctx, svc.Servers()[0].Spec)
	if errors.Is(err, network.ErrNoCommonProtocol) {
		return fmt.Errorf("%w: %w", network.ErrNoClient, err)
	} else if err != nil {
		return err
	}
	s, err := p.Open(ctx, spec)
	if err != nil {
		return err
	}
	if err := ping.Exchange(ctx, s, 0, 1, 1); err != nil {
		return err
	}
	svc.pinged.Add(1)
	<-ctx.Done()
	return nil
}

// TestProtocolsServedBeforeRun: a peer that connects to a host built but
// not yet running sees its protocols (identify, negotiation) and is reset
// until Run, then served — never taken for a host that speaks none, which
// would end its client for good.
func TestProtocolsServedBeforeRun(t *testing.T) {
	a, err := network.NewHost(network.HostOptions{
		Key:         hosttest.Key(83),
		ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"},
		Services:    []network.Service{pingService{}},
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	var attempts, pinged atomic.Int64
	b := hosttest.Start(t, 84, a.P2PAddrs(), func(o *network.HostOptions) {
		o.Services = []network.Service{speaker{attempts: &attempts, pinged: &pinged}}
	})
	hosttest.Eventually(t, "B's client tried A before A runs", func() bool { return attempts.Load() > 0 && len(b.Peers()) == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	hosttest.Eventually(t, "B pings A once A runs", func() bool { return pinged.Load() > 0 })
}
