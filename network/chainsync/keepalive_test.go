package chainsync_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// TestQuietChainIsKeptAlive: at the tip of a chain that does not move, the
// server answers the held request with a keep-alive before the client's
// must-reply timeout, again and again; the client stays, and follows the
// chain when it moves.
func TestQuietChainIsKeptAlive(t *testing.T) {
	forger := chaintest.NewForger(1)
	blocks := forger.Extend(nil, 3, "a")
	remote, local := chaintest.New(100), chaintest.New(100)
	if err := chaintest.AddAll(remote, blocks); err != nil {
		t.Fatal(err)
	}
	const mustReply = 300 * time.Millisecond
	spec := chainsync.Spec().WithTimeouts(protocol.Timeouts{chainsync.StMustReply: mustReply})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, server, violations := sessions(t, ctx, spec)
	go func() {
		_ = (&chainsync.Server{Chain: remote, KeepAlive: 50 * time.Millisecond}).Serve(server.Context(), server)
	}()
	caughtUp := make(chan struct{}, 100)
	c := &chainsync.Client{
		Chain:          local,
		ValidateHeader: chaintest.ValidateHeader,
		OnCaughtUp:     func() { caughtUp <- struct{}{} },
		Fetch: func(_ context.Context, from, to block.Point) ([]*block.Block, error) {
			return remote.BlockRange(from, to)
		},
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, client) }()
	waitTip(t, local, remote.Tip(), done)

	// Each keep-alive is followed by a new request, held again: the client
	// is caught up once per keep-alive.
	deadline := time.After(10 * mustReply)
	for n := 0; n < 10; n++ {
		select {
		case <-caughtUp:
		case err := <-done:
			t.Fatalf("client ended after %d keep-alives: %v", n, err)
		case <-deadline:
			t.Fatalf("%d keep-alives within %v", n, 10*mustReply)
		}
	}
	select {
	case err := <-violations:
		t.Fatalf("an honest server on a quiet chain was found in violation: %v", err)
	default:
	}
	next := forger.Extend(blocks[len(blocks)-1], 1, "b")
	if err := chaintest.AddAll(remote, next); err != nil {
		t.Fatal(err)
	}
	waitTip(t, local, remote.Tip(), done)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) && !errors.Is(err, protocol.ErrClosed) {
		t.Fatalf("client ended with %v", err)
	}
}
