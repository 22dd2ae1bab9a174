package chainsync_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// TestMisbehavingPeer: a hand-written peer opens chain-sync streams to a
// node and misbehaves on each; the node resets the stream and counts the
// violation, every time.
func TestMisbehavingPeer(t *testing.T) {
	chain := chaintest.New(10)
	if err := chaintest.AddAll(chain, chaintest.NewForger(1).Extend(nil, 5, "a")); err != nil {
		t.Fatal(err)
	}
	findIntersect := protocoltest.Frames(t, &chainsync.MsgFindIntersect{Points: []block.Point{block.Origin}})
	for _, tc := range []struct {
		name string
		wire []byte
		idle time.Duration // the server's wait for a request, if not its default hour
		kind string
	}{
		// The frame deadline, however long Idle waits.
		{"truncated frame then silence", findIntersect[:len(findIntersect)-1], 0, "timeout"},
		{"idle stream never used", nil, 300 * time.Millisecond, "timeout"},
		// No pipelining: the second and third were sent before the
		// answer to the first could arrive.
		{"pipelined find intersects", append(append(append([]byte(nil), findIntersect...), findIntersect...), findIntersect...), 0, "agency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const runs = 6
			node := hosttest.Start(t, 1, nil, func(o *network.HostOptions) {
				_, o.Services = newServices(t, chainsync.ServiceOptions{
					Chain: chain, ValidateHeader: chaintest.ValidateHeader,
					Timeouts: idle(tc.idle),
				}, chain.BlockRange)
				o.FrameTimeout = 200 * time.Millisecond
				o.MaxViolations = 2 * runs // counted, not yet banned
			})
			peer := hosttest.Raw(t, 0)
			if err := hosttest.Connect(t, peer, node); err != nil {
				t.Fatal(err)
			}
			id := libp2pprotocol.ID(chainsync.Spec().ID())
			for run := 1; run <= runs; run++ {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				s, err := peer.NewStream(ctx, node.ID(), id)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Write(tc.wire); err != nil { // nil still negotiates the protocol
					t.Fatal(err)
				}
				_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.Copy(io.Discard, s); errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("run %d: the stream is still open", run)
				}
				_ = s.Reset()
				hosttest.Eventually(t, "the violation is counted", func() bool {
					return hosttest.Metric(t, node.Reg, "leiosnode_network_violations_total", map[string]string{"protocol": "chainsync", "kind": tc.kind}) == float64(run)
				})
			}
		})
	}
}

// idle overrides chain sync's Idle timeout with d, if not zero.
func idle(d time.Duration) protocol.Timeouts {
	if d == 0 {
		return nil
	}
	return protocol.Timeouts{chainsync.StIdle: d}
}
