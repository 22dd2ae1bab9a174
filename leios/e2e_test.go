package leios

import (
	"context"
	"crypto/ed25519"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
)

// netNode is a running pipeline served by a libp2p host on loopback.
type netNode struct {
	*Pipeline
	host *network.Host
}

func hostKey(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	s[0], s[1] = seed, 0xfe
	return ed25519.NewKeyFromSeed(s)
}

// startNetNode runs a pipeline and its host until the test ends.
func startNetNode(t *testing.T, seed byte, topology ...string) *netNode {
	t.Helper()
	p := openPipeline(t, testOptions(t))
	h, err := network.NewHost(network.HostOptions{
		Key:         hostKey(seed),
		ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"},
		Topology:    topology,
		Services:    p.Services(),
		MinBackoff:  50 * time.Millisecond,
		MaxBackoff:  400 * time.Millisecond,
		Logger:      quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := h.Run(ctx); err != nil {
			t.Errorf("host: %v", err)
		}
	})
	wg.Go(func() {
		if err := p.Run(ctx); err != nil {
			t.Errorf("pipeline: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() }) // before the LeiosDB closes
	return &netNode{Pipeline: p, host: h}
}

// header is an RB header of slot announcing eb, signed by a stand-in
// issuer (the test pipelines accept every header).
func header(slot uint64, eb *testEB) *block.Header {
	ann := eb.ann()
	return block.NewHeader(block.HeaderBody{BlockNumber: slot, Slot: slot, Announcement: &ann}, hostKey(0))
}

// publish publishes eb at slot on n, as its forge would.
func (n *netNode) publish(t *testing.T, slot uint64, eb *testEB) block.Point {
	t.Helper()
	if err := n.Publish(header(slot, eb), eb.body, eb.txs); err != nil {
		t.Fatal(err)
	}
	return eb.point(slot)
}

func awaitClosures(t *testing.T, p block.Point, nodes ...*netNode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, n := range nodes {
		if _, err := n.AwaitClosure(ctx, p); err != nil {
			t.Fatalf("closure of %s: %v", p, err)
		}
		// The last reply completed the closure just before its request
		// ended (and its bytes were counted).
		for n.Stats().RequestsInFlight > 0 {
			if ctx.Err() != nil {
				t.Fatalf("requests still in flight: %+v", n.Stats())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// A line of three pipelines over libp2p, with their own notify and fetch:
// C publishes an EB, which reaches A and B; then A publishes an EB that
// holds those txs and as many again. B hears the announcement and A's
// offers and fetches the body and the half it misses; so does C from B.
func TestEndToEndLine(t *testing.T) {
	a := startNetNode(t, 1)
	b := startNetNode(t, 2, a.host.P2PAddrs()...)
	c := startNetNode(t, 3, b.host.P2PAddrs()...)

	const txSize, n = 700, 1500 // a 1 MB closure: several requests, pipelined
	shared := makeEB(t, txSize, seeds(0, n/2)...)
	awaitClosures(t, c.publish(t, 5, shared), a, b, c)
	before := map[*netNode]uint64{}
	for _, node := range []*netNode{a, b, c} {
		before[node] = node.Stats().FetchedBytes
	}

	eb := makeEB(t, txSize, seeds(0, n)...)
	p := a.publish(t, 10, eb)
	awaitClosures(t, p, a, b, c)
	for name, node := range map[string]*netNode{"a": a, "b": b, "c": c} {
		if err := node.CheckConsistency(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	want := eb.body.Size() + eb.body.ClosureSize() - shared.body.ClosureSize()
	for name, node := range map[string]*netNode{"b": b, "c": c} {
		if got := node.Stats().FetchedBytes - before[node]; got != want {
			t.Errorf("%s fetched %d bytes, want the body and the missing half once: %d", name, got, want)
		}
	}
	if got := a.Stats().FetchedBytes - before[a]; got != 0 {
		t.Errorf("a fetched %d bytes of its own EB", got)
	}
}
