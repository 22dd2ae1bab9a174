package fetch

import (
	"context"
	"crypto/ed25519"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network"
)

// netNode is a Fetcher served and run by a libp2p host on loopback.
type netNode struct {
	*Fetcher
	host *network.Host
}

func hostKey(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	s[0], s[1] = seed, 0xfe
	return ed25519.NewKeyFromSeed(s)
}

// startNetNode runs a Fetcher and its host until the test ends.
func startNetNode(t *testing.T, seed byte, topology ...string) *netNode {
	t.Helper()
	f := newTestFetcher(t)
	h, err := network.NewHost(network.HostOptions{
		Key:         hostKey(seed),
		ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"},
		Topology:    topology,
		Services:    []network.Service{f.Service()},
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
		if err := f.Run(ctx); err != nil {
			t.Errorf("fetcher: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() }) // before the LeiosDB closes
	return &netNode{Fetcher: f, host: h}
}

// relayOffers plays notify from `from` to `to`: every body `from` comes to
// hold is offered to `to`, and every closure it completes.
func relayOffers(t *testing.T, from, to *netNode) {
	events, cancel := from.db.Subscribe()
	var wg sync.WaitGroup
	wg.Go(func() {
		for e := range events {
			switch e.Kind {
			case leiosdb.BodyStored:
				info, _, err := from.db.PointInfo(e.Point)
				if err == nil {
					to.BlockOffer(from.host.ID(), e.Point, info.EbSize)
				}
			case leiosdb.ClosureComplete:
				to.BlockTxsOffer(from.host.ID(), e.Point)
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (n *netNode) holdsClosure(p block.Point) bool {
	info, ok, err := n.db.PointInfo(p)
	return err == nil && ok && info.Complete()
}

// A line of three nodes over libp2p: A forges an EB; B hears the
// announcement and A's offers and fetches body and closure; C, which
// already holds half the txs (from an EB of its own), hears B's offers and
// fetches the body and only the txs it misses.
func TestEndToEndLine(t *testing.T) {
	a := startNetNode(t, 1)
	b := startNetNode(t, 2, a.host.P2PAddrs()...)
	c := startNetNode(t, 3, b.host.P2PAddrs()...)
	relayOffers(t, a, b)
	relayOffers(t, b, c)

	const txSize, n = 700, 1500 // a 1 MB closure: several requests, pipelined
	eb := makeEB(t, txSize, seeds(0, n)...)
	shared := makeEB(t, txSize, seeds(0, n/2)...)
	if err := forgeOn(c.Fetcher, 5, shared); err != nil {
		t.Fatal(err)
	}
	p := eb.point(10)
	if err := forgeOn(a.Fetcher, 10, eb); err != nil {
		t.Fatal(err)
	}
	for _, node := range []*netNode{b, c} {
		if err := node.Announcement(10, rbHash(10, eb), eb.ann()); err != nil {
			t.Fatal(err)
		}
	}
	a.BlockOffer(a.host.ID(), p, eb.body.Size()) // harmless: a holds it
	b.BlockOffer(a.host.ID(), p, eb.body.Size())
	b.BlockTxsOffer(a.host.ID(), p)

	eventually(t, "b and c hold the closure", func() bool { return b.holdsClosure(p) && c.holdsClosure(p) })
	for name, node := range map[string]*netNode{"a": a, "b": b, "c": c} {
		if err := node.CheckConsistency(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got, want := b.Stats().FetchedBytes, eb.body.Size()+eb.body.ClosureSize(); got != want {
		t.Fatalf("b fetched %d bytes, want the body and closure once: %d", got, want)
	}
	if got, want := c.Stats().FetchedBytes, eb.body.Size()+eb.body.ClosureSize()-shared.body.ClosureSize(); got != want {
		t.Fatalf("c fetched %d bytes, want the body and the missing half: %d", got, want)
	}
	if s := a.Stats(); s.FetchedBytes != 0 {
		t.Fatalf("a fetched its own EB: %+v", s)
	}
}

// forgeOn puts an EB through f's handlers as the forge does.
func forgeOn(f *Fetcher, slot uint64, eb *testEB) error {
	p := eb.point(slot)
	if err := f.Announcement(slot, rbHash(slot, eb), eb.ann()); err != nil {
		return err
	}
	if err := f.Body(p, eb.body.Bytes()); err != nil {
		return err
	}
	return f.Txs(p, eb.txs, true)
}
