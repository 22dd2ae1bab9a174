package fetch

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// bodyIngest takes fetched bodies as held, and reports each point.
type bodyIngest struct {
	f   *Fetcher
	got chan block.Point
}

func (in *bodyIngest) Body(p block.Point, eb *block.EBBody) error {
	in.f.BodyHeld(p, eb, nil)
	in.got <- p
	return nil
}

func (*bodyIngest) Txs(block.Point, [][]byte) error { return nil }

// TestIdleStreamSaysDone: a client with nothing to ask for KeepAlive says
// done and its stream closes, well before the server's Idle timeout; the
// next request opens a new stream, and the peer's offers outlived the old
// one.
func TestIdleStreamSaysDone(t *testing.T) {
	db := openDB(t, t.TempDir())
	first, second := blocktest.NewEB(t, 100, blocktest.Seeds(0, 3)...), blocktest.NewEB(t, 100, blocktest.Seeds(3, 6)...)
	storeEB(t, db, 10, first, first.Txs)
	storeEB(t, db, 11, second, second.Txs)

	const idle = 300 * time.Millisecond
	in := &bodyIngest{got: make(chan block.Point, 2)}
	f, err := New(Options{
		Store: db, Ingest: in, Limits: testLimits, Logger: quietLogger(),
		KeepAlive: idle / 3, Timeouts: protocol.Timeouts{StIdle: idle},
	})
	if err != nil {
		t.Fatal(err)
	}
	in.f = f

	// Each session the client opens gets a server of its own, as the
	// host gives each stream.
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		served    []error
		violation []error
	)
	open := func(context.Context) (*protocol.Session, error) {
		a, b := net.Pipe()
		onViolation := func(err error) { mu.Lock(); violation = append(violation, err); mu.Unlock() }
		client := protocol.NewSession(context.Background(), protocol.Config{Spec: f.spec, Role: protocol.Client, Stream: pipeStream{a}, OnViolation: onViolation})
		server := protocol.NewSession(context.Background(), protocol.Config{Spec: f.spec, Role: protocol.Server, Stream: pipeStream{b}, OnViolation: onViolation})
		wg.Go(func() {
			err := (&Server{Store: db, Logger: quietLogger()}).Serve(server.Context(), server)
			server.Close()
			mu.Lock()
			served = append(served, err)
			mu.Unlock()
		})
		return client, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait(); wg.Wait() }()
	running.Go(func() { _ = f.Run(ctx) })
	peer := peerID("a")
	running.Go(func() { _ = f.RunPeer(ctx, peer, open) })

	fetchBody := func(eb *blocktest.EB, slot uint64) {
		t.Helper()
		p := eb.Point(slot)
		f.Announced(p, eb.Body.Size())
		f.BlockOffer(peer, p, eb.Body.Size())
		select {
		case got := <-in.got:
			if got != p {
				t.Fatalf("fetched %s, want %s", got, p)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("body of %s not fetched", p)
		}
	}
	sessionsEnded := func(n int) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(served) == n
	}
	fetchBody(first, 10)
	eventually(t, "the idle stream ends", func() bool { return sessionsEnded(1) })
	fetchBody(second, 11)
	eventually(t, "the second stream ends", func() bool { return sessionsEnded(2) })
	time.Sleep(idle) // were the server to time anyone out, it would have by now
	mu.Lock()
	defer mu.Unlock()
	for _, err := range served {
		if err != nil {
			t.Fatalf("a server ended with %v, want done", err)
		}
	}
	if len(violation) != 0 {
		t.Fatalf("violations: %v", violation)
	}
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
