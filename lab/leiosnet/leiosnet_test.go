package leiosnet

import (
	"context"
	"math/rand/v2"
	"testing"

	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/internal/waittest"
)

func start(t *testing.T, opts Options) *Network {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Hang)
	defer cancel()
	n, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return n
}

// Ten nodes on 50 ms / 50 Mbit/s links in a random graph: three EBs forged
// back to back on different nodes, each fetched by every other node, end
// up complete everywhere, with the fetch logic consistent on every node.
func TestTenNodesAcquireEveryClosure(t *testing.T) {
	n := start(t, Options{Nodes: 10, Topology: RandomGraph, Seed: 7})
	rng := rand.New(rand.NewPCG(7, 7))
	var ebs []*EB
	for _, from := range []int{0, 4, 9} {
		eb, err := n.Forge(GenerateTxs(rng, 60_000))
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Nodes()[from].Publish(eb); err != nil {
			t.Fatal(err)
		}
		ebs = append(ebs, eb)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Hang)
	defer cancel()
	for _, eb := range ebs {
		if err := n.AwaitClosure(ctx, eb.Point()); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range n.Nodes() {
		if err := nd.Pipeline.CheckConsistency(); err != nil {
			t.Errorf("node %d: %v", nd.Index, err)
		}
		if s := nd.Pipeline.FetchStats(); s.MissingTxs != 0 || s.BodiesWanted != 0 || s.Incomplete != 0 {
			t.Errorf("node %d still wants something: %+v", nd.Index, s)
		}
	}
	// Every node fetched at least the two EBs it did not forge, and nobody
	// fetched an EB more than twice over (MaxPeersPerItem).
	var per uint64
	for _, eb := range ebs {
		per = max(per, eb.Body.Size()+eb.ClosureSize())
	}
	for _, nd := range n.Nodes() {
		if got := nd.FetchedBytes(); got < 2*per*9/10 || got > 2*3*per {
			t.Errorf("node %d fetched %d bytes; three EBs are %d bytes each at most", nd.Index, got, per)
		}
	}
}

// A line of three where every node already holds half of an EB's txs (from
// an earlier EB): the receivers fetch the body and only the missing half,
// and the EB crosses each hop.
func TestPreheldShareIsNotFetched(t *testing.T) {
	n := start(t, Options{Nodes: 3, Topology: Line})
	rng := rand.New(rand.NewPCG(3, 3))
	txs := GenerateTxs(rng, 400_000)
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Hang)
	defer cancel()
	seed, err := n.Preseed(ctx, txs[:len(txs)/2])
	if err != nil {
		t.Fatal(err)
	}
	eb, err := n.Forge(txs)
	if err != nil {
		t.Fatal(err)
	}
	d, err := n.Diffuse(ctx, 0, eb)
	if err != nil {
		t.Fatal(err)
	}
	want := eb.Body.Size() + eb.ClosureSize() - seed.ClosureSize()
	if d.Fetched[0] != 0 {
		t.Errorf("the forger fetched %d bytes", d.Fetched[0])
	}
	for i := 1; i < 3; i++ {
		if d.Fetched[i] != want {
			t.Errorf("node %d fetched %d bytes, want the body and the missing half: %d", i, d.Fetched[i], want)
		}
	}
	if !(d.Closure[0] <= d.Closure[1] && d.Closure[1] < d.Closure[2]) {
		t.Errorf("closure times not in line order: %v", d.Closure)
	}
	// Past node 1's complete closure, node 2 still needs its block-txs offer
	// (one way) and a txs round trip: three link latencies.
	if hop := d.Closure[2] - d.Closure[1]; hop < 3*n.Options().Latency {
		t.Errorf("a 50 ms hop took only %v", hop)
	}
}

func TestBuildEdgesIsConnectedAndSeeded(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		edges int
	}{
		{Options{Nodes: 10, Topology: Line}, 9},
		{Options{Nodes: 10, Topology: RandomGraph, Seed: 1}, 19},
		{Options{Nodes: 3, Topology: RandomGraph, Seed: 2}, 3}, // only three pairs exist
	} {
		opts, err := tc.opts.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		edges := buildEdges(opts)
		if len(edges) != tc.edges {
			t.Errorf("%v: %d edges, want %d", opts.Topology, len(edges), tc.edges)
		}
		reached := map[int]bool{0: true}
		for changed := true; changed; {
			changed = false
			for _, e := range edges {
				if reached[e[0]] != reached[e[1]] {
					reached[e[0]], reached[e[1]], changed = true, true, true
				}
			}
		}
		if len(reached) != opts.Nodes {
			t.Errorf("%v: %d of %d nodes connected", opts.Topology, len(reached), opts.Nodes)
		}
		if again := buildEdges(opts); len(again) != len(edges) || again[len(again)-1] != edges[len(edges)-1] {
			t.Errorf("%v: not reproducible from the seed", opts.Topology)
		}
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// pebble's and mocknet's background goroutines that outlive Close
		goleak.IgnoreAnyFunction("github.com/cockroachdb/pebble/v2/internal/cache.(*cleanupManager).mainLoop"),
	)
}
