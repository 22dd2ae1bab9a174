package chainsync_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

// forkNode is a host syncing a chaindb-backed chain, as a node does.
type forkNode struct {
	*hosttest.Node
	chain *chaintest.DB
	sync  *chainsync.Service
}

func startForkNode(t *testing.T, seed byte, chain *chaintest.DB, topology []string) *forkNode {
	t.Helper()
	n := &forkNode{chain: chain}
	n.Node = hosttest.Start(t, seed, topology, func(o *network.HostOptions) {
		n.sync, o.Services = newServices(t, chainsync.ServiceOptions{
			Chain:          chain,
			ValidateHeader: chaintest.ValidateHeader,
			IsForkTooDeep:  chaintest.IsForkTooDeep,
			ForkRecheck:    50 * time.Millisecond,
			Logger:         o.Logger,
		}, chain.BlockRange)
	})
	return n
}

// TestChainDeeperThanKApart: A forged alone for more than k blocks while B
// and C went on together. A finds both peers' chains fork from its own
// deeper than k, warns once per peer however often it asks again, fetches
// nothing and says it is stranded; B and C each find only A's chain so,
// and are not. Nobody is found in violation.
func TestChainDeeperThanKApart(t *testing.T) {
	const k = 10
	forger := chaintest.NewForger(1)
	prefix := forger.Extend(nil, 5, "p")
	alone := forger.Extend(prefix[4], k+5, "alone")
	together := forger.Extend(prefix[4], k+8, "together")
	chainA, chainB, chainC := chaintest.OpenDB(t, k), chaintest.OpenDB(t, k), chaintest.OpenDB(t, k)
	for _, err := range []error{
		chaintest.AddAll(chainA, prefix), chaintest.AddAll(chainA, alone),
		chaintest.AddAll(chainB, prefix), chaintest.AddAll(chainB, together),
		chaintest.AddAll(chainC, prefix), chaintest.AddAll(chainC, together),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	tipA := chainA.Tip()
	b := startForkNode(t, 2, chainB, nil)
	c := startForkNode(t, 3, chainC, b.P2PAddrs())
	a := startForkNode(t, 1, chainA, append(b.P2PAddrs(), c.P2PAddrs()...))

	hosttest.Eventually(t, "A is stranded on its own chain", func() bool {
		st := a.sync.Forks()
		return st.Stranded && len(st.Forked) == 2
	})
	hosttest.Eventually(t, "B and C each find A's chain forked", func() bool {
		return len(b.sync.Forks().Forked) == 1 && len(c.sync.Forks().Forked) == 1
	})
	time.Sleep(300 * time.Millisecond) // A asks again, a few times

	st := a.sync.Forks()
	if st.DeepForks != 2 || st.Forked[b.ID()] != chainB.Tip() || st.Forked[c.ID()] != chainC.Tip() {
		t.Fatalf("A's fork status %+v, want B's and C's tips, counted once each", st)
	}
	for _, n := range []*forkNode{b, c} {
		st := n.sync.Forks()
		if st.Stranded || st.DeepForks != 1 || st.Forked[a.ID()] != tipA {
			t.Fatalf("%s's fork status %+v, want only A's chain, and not stranded", n.ID(), st)
		}
	}
	logs := a.Logs.String()
	for _, id := range []peer.ID{b.ID(), c.ID()} {
		warned := 0
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, "deeper than k") && strings.Contains(line, id.String()) {
				warned++
				if !strings.Contains(line, tipA.String()) || !strings.Contains(line, chainB.Tip().String()) {
					t.Errorf("the warning does not give both tips: %s", line)
				}
			}
		}
		if warned != 1 {
			t.Fatalf("A warned %d times of %s's fork, want once:\n%s", warned, id, logs)
		}
	}
	if !strings.Contains(logs, "this node's chain cannot join theirs") {
		t.Fatalf("A does not say it is stranded:\n%s", logs)
	}
	for _, n := range []*forkNode{a, b, c} {
		if got := hosttest.Metric(t, n.Reg, "leiosnode_network_messages_total", map[string]string{"protocol": "blockfetch"}); got != 0 {
			t.Fatalf("%s fetched blocks (%v block-fetch messages)", n.ID(), got)
		}
		if got := hosttest.Metric(t, n.Reg, "leiosnode_network_violations_total", nil); got != 0 {
			t.Fatalf("%s counted %v violations", n.ID(), got)
		}
	}
	if chainA.Tip() != tipA {
		t.Fatalf("A's tip moved to %s", chainA.Tip())
	}
}

// TestServerSwitchesDeeperThanK: the client follows the server's chain
// until the server switches to a fork that leaves the client's immutable
// tip behind: the first header of the fork is a deep fork, and so is
// every intersection after; the client fetches nothing of it.
func TestServerSwitchesDeeperThanK(t *testing.T) {
	forger := chaintest.NewForger(1)
	main := forger.Extend(nil, 10, "main")
	remote, local := chaintest.New(100), chaintest.New(3) // the client's immutable tip: block 7
	if err := chaintest.AddAll(remote, main); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, server, violations := sessions(t, ctx, chainsync.Spec())
	go func() { _ = (&chainsync.Server{Chain: remote}).Serve(server.Context(), server) }()
	forks := make(chan *chainsync.DeepFork, 10)
	var fetched atomic.Int64
	c := &chainsync.Client{
		Chain:          local,
		ValidateHeader: chaintest.ValidateHeader,
		OnFork:         func(f *chainsync.DeepFork) { forks <- f },
		ForkRecheck:    20 * time.Millisecond,
		Fetch: func(_ context.Context, from, to block.Point) ([]*block.Block, error) {
			blocks, err := remote.BlockRange(from, to)
			fetched.Add(int64(len(blocks)))
			return blocks, err
		},
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, client) }()
	waitTip(t, local, remote.Tip(), done)
	if f := <-forks; f != nil {
		t.Fatalf("the chains join, yet the client reported %v", f)
	}
	before := fetched.Load()

	fork := forger.Extend(main[3], 10, "fork") // from block 4, below the client's immutable tip
	if err := chaintest.AddAll(remote, fork); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // the header (the server may still be adding the fork), then intersections
		select {
		case f := <-forks:
			if f == nil || f.Ours != local.Tip() || i > 0 && f.Theirs != remote.Tip() {
				t.Fatalf("reported %v, want a deep fork to %s", f, remote.Tip())
			}
		case err := <-done:
			t.Fatalf("client ended with %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no deep fork reported")
		}
	}
	if fetched.Load() != before || local.Tip().Point != main[9].Point() {
		t.Fatalf("the client fetched %d blocks of the fork, tip %s", fetched.Load()-before, local.Tip())
	}
	select {
	case err := <-violations:
		t.Fatalf("a deep fork was taken for a violation: %v", err)
	default:
	}
}
