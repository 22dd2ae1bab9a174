package chainsync_test

import (
	"slices"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

// startNode runs a host that syncs chain with its peers by chain sync and
// serves it by chain sync and block fetch, as the node does.
func startNode(t *testing.T, seed byte, chain *chaintest.Chain, topology []string, configure ...func(*network.HostOptions)) *hosttest.Node {
	t.Helper()
	withChain := func(o *network.HostOptions) {
		_, services := newServices(t, chainsync.ServiceOptions{Chain: chain, ValidateHeader: chaintest.ValidateHeader}, chain.BlockRange)
		o.Services = append(o.Services, services...)
	}
	return hosttest.Start(t, seed, topology, append([]func(*network.HostOptions){withChain}, configure...)...)
}

// newServices are chain sync of opts and block fetch of blockRange, as the
// node runs them: sync, and both for the host.
func newServices(t *testing.T, opts chainsync.ServiceOptions, blockRange func(from, to block.Point) ([]*block.Block, error)) (sync *chainsync.Service, services []network.Service) {
	t.Helper()
	sync, err := chainsync.NewService(opts)
	if err != nil {
		t.Fatal(err)
	}
	fetch, err := blockfetch.NewService(blockfetch.ServiceOptions{Blocks: blockfetch.FromSlices(blockRange)})
	if err != nil {
		t.Fatal(err)
	}
	return sync, []network.Service{sync, fetch}
}

func sameTip(chains ...*chaintest.Chain) func() bool {
	return func() bool {
		want := chains[0].Tip()
		for _, c := range chains[1:] {
			if c.Tip() != want {
				return false
			}
		}
		return true
	}
}

func hasBlock(c *chaintest.Chain, b *block.Block) bool {
	got, err := c.BlockByNumber(b.Header.BlockNumber)
	return err == nil && got.Hash() == b.Hash()
}

func TestThreeNodesCatchUpAndFollow(t *testing.T) {
	forger := chaintest.NewForger(1)
	blocks := forger.Extend(nil, 30, "a")
	chainA, chainB, chainC := chaintest.New(10), chaintest.New(10), chaintest.New(10)
	if err := chaintest.AddAll(chainA, blocks); err != nil {
		t.Fatal(err)
	}
	a := startNode(t, 1, chainA, nil)
	b := startNode(t, 2, chainB, a.P2PAddrs())
	c := startNode(t, 3, chainC, b.P2PAddrs()) // C hears of A's blocks only through B
	hosttest.Eventually(t, "B and C catch up with A", sameTip(chainA, chainB, chainC))

	// A forges on: the new blocks flow to B, and from B to C.
	for _, blk := range forger.Extend(blocks[len(blocks)-1], 5, "b") {
		if err := chainA.AddBlock(blk); err != nil {
			t.Fatal(err)
		}
	}
	hosttest.Eventually(t, "B and C follow A", sameTip(chainA, chainB, chainC))
	if chainC.Tip().BlockNumber != 35 {
		t.Fatalf("tip %s, want block 35", chainC.Tip())
	}

	peerIDs := func(n *hosttest.Node) []string {
		var ids []string
		for _, p := range n.Peers() {
			ids = append(ids, p.ID.String())
		}
		return ids
	}
	hosttest.Eventually(t, "B lists A and C as peers", func() bool {
		return slices.Equal(peerIDs(b), sortedIDs(a, c))
	})
	if got := b.Peers(); got[0].Addr == "" {
		t.Fatalf("peer %s has no address", got[0].ID)
	}
	if hosttest.Metric(t, c.Reg, "leiosnode_network_messages_total", map[string]string{"protocol": "blockfetch", "direction": "received"}) == 0 {
		t.Fatal("C counted no block-fetch messages")
	}
}

func sortedIDs(nodes ...*hosttest.Node) []string {
	var ids []string
	for _, n := range nodes {
		ids = append(ids, n.ID().String())
	}
	slices.Sort(ids)
	return ids
}

func TestRestartFromEmptyChainCatchesUp(t *testing.T) {
	forger := chaintest.NewForger(1)
	blocks := forger.Extend(nil, 40, "a")
	chainA := chaintest.New(10)
	if err := chaintest.AddAll(chainA, blocks); err != nil {
		t.Fatal(err)
	}
	a := startNode(t, 1, chainA, nil)
	first := chaintest.New(10)
	b := startNode(t, 2, first, a.P2PAddrs())
	hosttest.Eventually(t, "B catches up", sameTip(chainA, first))
	b.Stop()

	// A moves on while B is down; B comes back with an empty chain (same
	// key, new port) and catches up from origin.
	for _, blk := range forger.Extend(blocks[len(blocks)-1], 10, "b") {
		if err := chainA.AddBlock(blk); err != nil {
			t.Fatal(err)
		}
	}
	restarted := chaintest.New(10)
	startNode(t, 2, restarted, a.P2PAddrs())
	hosttest.Eventually(t, "restarted B catches up", sameTip(chainA, restarted))
}

func TestForkConvergesOnLongerChain(t *testing.T) {
	forger := chaintest.NewForger(1)
	prefix := forger.Extend(nil, 5, "p")
	chainA, chainB := chaintest.New(10), chaintest.New(10)
	for _, err := range []error{
		chaintest.AddAll(chainA, prefix), chaintest.AddAll(chainA, forger.Extend(prefix[4], 3, "a")),
		chaintest.AddAll(chainB, prefix), chaintest.AddAll(chainB, forger.Extend(prefix[4], 6, "b")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	longer := chainB.Tip()
	b := startNode(t, 2, chainB, nil)
	startNode(t, 1, chainA, b.P2PAddrs())
	hosttest.Eventually(t, "A and B agree", sameTip(chainA, chainB))
	if chainA.Tip() != longer {
		t.Fatalf("converged on %s, want the longer %s", chainA.Tip(), longer)
	}
}

func TestPeerServingBadBodyIsBanned(t *testing.T) {
	forger := chaintest.NewForger(1)
	prefix := forger.Extend(nil, 5, "p")
	honest := forger.Extend(prefix[4], 2, "honest")
	// M's chain is longer, but its block 6 carries a body its header does
	// not commit to.
	bad := forger.Extend(prefix[4], 5, "bad")
	chainH, chainM := chaintest.New(10), chaintest.New(10)
	for _, err := range []error{
		chaintest.AddAll(chainH, prefix), chaintest.AddAll(chainH, honest),
		chaintest.AddAll(chainM, prefix), chainM.AddUnchecked(chaintest.Tampered(bad[0])),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, blk := range bad[1:] {
		if err := chainM.AddUnchecked(blk); err != nil {
			t.Fatal(err)
		}
	}
	opts := func(o *network.HostOptions) { o.MaxViolations = 2 }
	h := startNode(t, 1, chainH, nil, opts)
	startNode(t, 2, chainM, h.P2PAddrs(), opts) // M keeps dialing H

	hosttest.Eventually(t, "H bans M", func() bool {
		return hosttest.Metric(t, h.Reg, "leiosnode_network_bans_total", nil) == 1
	})
	hosttest.Eventually(t, "M is disconnected", func() bool { return len(h.Peers()) == 0 })
	if v := hosttest.Metric(t, h.Reg, "leiosnode_network_violations_total", map[string]string{"protocol": "blockfetch"}); v < 2 {
		t.Fatalf("%v block-fetch violations counted, want 2", v)
	}
	if chainH.Tip().Point != honest[1].Point() || !hasBlock(chainH, honest[0]) {
		t.Fatalf("H's tip %s, want its honest chain", chainH.Tip())
	}
	if _, err := chainH.BlockRange(bad[0].Point(), bad[0].Point()); err == nil {
		t.Fatal("H stored the tampered block")
	}
	// M keeps redialing, and the gater keeps refusing it.
	hosttest.Eventually(t, "H refuses M's redials", func() bool {
		return hosttest.Metric(t, h.Reg, "leiosnode_network_refused_connections_total", nil) >= 2
	})
	if len(h.Peers()) != 0 {
		t.Fatalf("banned M reconnected: H peers %v", h.Peers())
	}
}
