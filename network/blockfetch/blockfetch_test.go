package blockfetch_test

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sessions returns a client and a server session over a pipe, and the
// client's violation.
func sessions(t *testing.T) (client, server *protocol.Session, violations <-chan error) {
	t.Helper()
	client, server, violations, _ = protocoltest.Sessions(t, context.Background(), blockfetch.Spec())
	return client, server, violations
}

func TestSpecValidates(t *testing.T) {
	if err := blockfetch.Spec().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestFetchFromServer(t *testing.T) {
	forger := chaintest.NewForger(1)
	chain := chaintest.New(100)
	blocks := forger.Extend(nil, 20, "a")
	if err := chaintest.AddAll(chain, blocks); err != nil {
		t.Fatal(err)
	}
	client, server, violations := sessions(t)
	served := make(chan error, 1)
	go func() {
		served <- (&blockfetch.Server{Blocks: blockfetch.FromSlices(chain.BlockRange)}).Serve(server.Context(), server)
	}()
	c := blockfetch.NewClient(client, 0)
	ctx := context.Background()

	got, err := c.Fetch(ctx, blocks[4].Point(), blocks[14].Point())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, blocks[4:15], func(a, b *block.Block) bool { return bytes.Equal(a.Bytes(), b.Bytes()) }) {
		t.Fatalf("got %d blocks, want blocks 5..15", len(got))
	}
	// A range the server does not have: no blocks, and the session goes on.
	other := forger.Block(nil, 99, "elsewhere")
	if _, err := c.Fetch(ctx, other.Point(), other.Point()); !errors.Is(err, blockfetch.ErrNoBlocks) {
		t.Fatalf("fetch of an unknown range: %v", err)
	}
	if got, err := c.Fetch(ctx, blocks[19].Point(), blocks[19].Point()); err != nil || len(got) != 1 {
		t.Fatalf("fetch after no blocks: %d blocks, %v", len(got), err)
	}
	if err := client.Send(&blockfetch.MsgClientDone{}); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("server: %v", err)
	}
	select {
	case err := <-violations:
		t.Fatalf("violation %v", err)
	default:
	}
}

// TestClientChecksBlocks plays misbehaving servers: each answer to a request
// for blocks 3..6 is wrong in one way.
func TestClientChecksBlocks(t *testing.T) {
	forger := chaintest.NewForger(1)
	blocks := forger.Extend(nil, 8, "a")
	from, to := blocks[2].Point(), blocks[5].Point()
	fork := forger.Extend(blocks[3], 2, "fork")
	for _, tc := range []struct {
		name  string
		batch []*block.Block
	}{
		{"tampered body", []*block.Block{blocks[2], chaintest.Tampered(blocks[3]), blocks[4], blocks[5]}},
		{"wrong first block", blocks[1:6]},
		{"gap", []*block.Block{blocks[2], blocks[3], blocks[5]}},
		{"other branch", []*block.Block{blocks[2], blocks[3], fork[0], fork[1]}},
		{"past the end", blocks[2:7]},
		{"ends early", blocks[2:5]},
		{"empty batch", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server, violations := sessions(t)
			go func() {
				if _, err := server.Recv(context.Background()); err != nil {
					return
				}
				if server.Send(&blockfetch.MsgStartBatch{}) != nil {
					return
				}
				for _, b := range tc.batch {
					if server.Send(&blockfetch.MsgBlock{Block: b}) != nil {
						return
					}
				}
				_ = server.Send(&blockfetch.MsgBatchDone{})
			}()
			_, err := blockfetch.NewClient(client, 0).Fetch(context.Background(), from, to)
			if !errors.Is(err, blockfetch.ErrBlockMismatch) {
				t.Fatalf("fetch: %v, want ErrBlockMismatch", err)
			}
			if err := <-violations; !errors.Is(err, blockfetch.ErrBlockMismatch) {
				t.Fatalf("reported %v", err)
			}
			if !errors.Is(client.Err(), blockfetch.ErrBlockMismatch) {
				t.Fatalf("session ended with %v", client.Err())
			}
		})
	}
}

func TestBatchLimit(t *testing.T) {
	blocks := chaintest.NewForger(1).Extend(nil, 5, "a")
	chain := chaintest.New(100)
	if err := chaintest.AddAll(chain, blocks); err != nil {
		t.Fatal(err)
	}
	client, server, violations := sessions(t)
	go func() {
		_ = (&blockfetch.Server{Blocks: blockfetch.FromSlices(chain.BlockRange)}).Serve(server.Context(), server)
	}()
	if _, err := blockfetch.NewClient(client, 3).Fetch(context.Background(), blocks[0].Point(), blocks[4].Point()); !errors.Is(err, blockfetch.ErrBlockMismatch) {
		t.Fatalf("fetch of 5 blocks with a limit of 3: %v", err)
	}
	<-violations
}

// A peer that asks for a range and reads nothing costs the server the one
// block it is sending, not the range: blocks are read from the store as
// they are sent, and the peer is cut off (ErrSlowReader) once the frame
// allowance passes.
func TestUnreadRangeHoldsOneBlock(t *testing.T) {
	blocks := chaintest.NewForger(1).Extend(nil, 50, "a")
	chain := chaintest.New(100)
	if err := chaintest.AddAll(chain, blocks); err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe() // unbuffered: a write waits for its reader
	defer a.Close()
	server := protocol.NewSession(context.Background(), protocol.Config{
		Spec: blockfetch.Spec(), Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}, FrameTimeout: 100 * time.Millisecond,
	})
	defer server.Close()
	var read atomic.Int64 // blocks the server took from the store
	counting := func(from, to block.Point) (iter.Seq2[*block.Block, error], error) {
		seq, err := blockfetch.FromSlices(chain.BlockRange)(from, to)
		if err != nil {
			return nil, err
		}
		return func(yield func(*block.Block, error) bool) {
			for blk, err := range seq {
				read.Add(1)
				if !yield(blk, err) {
					return
				}
			}
		}, nil
	}
	served := make(chan error, 1)
	go func() { served <- (&blockfetch.Server{Blocks: counting}).Serve(server.Context(), server) }()
	// The request, written by hand; then nothing is read.
	req, err := protocol.Encode(&blockfetch.MsgRequestRange{From: blocks[0].Point(), To: blocks[49].Point()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(protocol.AppendFrame(nil, req)); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, protocol.ErrSlowReader) {
		t.Fatalf("Serve: %v, want ErrSlowReader", err)
	}
	if n := read.Load(); n > 1 {
		t.Fatalf("the server read %d blocks of the range for a peer that read none", n)
	}
}
