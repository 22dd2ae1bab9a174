package fetch

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
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

func (*bodyIngest) Txs(block.Point, []block.HashedTx) error { return nil }

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
		KeepAlive: idle / 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	in.f = f
	spec := Spec(testLimits).WithTimeouts(protocol.Timeouts{StIdle: idle})

	// Each session the client opens gets a server of its own, as the
	// host gives each stream.
	var (
		wg        sync.WaitGroup
		served    = make(chan error, 2) // how each server ended
		violation = make(chan error, 4)
	)
	open := func(context.Context) (*protocol.Session, error) {
		a, b := net.Pipe()
		onViolation := func(err error) { violation <- err }
		client := protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Client, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: onViolation})
		server := protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}, OnViolation: onViolation})
		wg.Go(func() {
			served <- (&Server{Store: db, Logger: quietLogger()}).Serve(server.Context(), server)
			server.Close()
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
		case <-time.After(waittest.Hang):
			t.Fatalf("body of %s not fetched after %v, a hang", p, waittest.Hang)
		}
	}
	ended := func(which string) {
		t.Helper()
		select {
		case err := <-served:
			if err != nil {
				t.Fatalf("the %s stream's server ended with %v, want done", which, err)
			}
		case <-time.After(waittest.Hang):
			t.Fatalf("the %s stream is still open after %v, a hang", which, waittest.Hang)
		}
	}
	fetchBody(first, 10)
	ended("first")
	fetchBody(second, 11)
	ended("second")
	time.Sleep(idle) // were the server to time anyone out, it would have by now
	select {
	case err := <-violation:
		t.Fatalf("violation: %v", err)
	default:
	}
}
