package peersharing_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/leiosnode/leiosnode/internal/freeport"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
	"github.com/leiosnode/leiosnode/network/peersharing"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// sharing runs a host with peer sharing, as a relay does.
func sharing(o *network.HostOptions) {
	svc, err := peersharing.NewService(peersharing.ServiceOptions{})
	if err != nil {
		panic(err) // it requires nothing: an error is a broken constructor
	}
	o.PeerSharing = svc
}

// quick shortens the connection manager's waits.
func quick(o *network.HostOptions) {
	o.PeerSharingInterval = 100 * time.Millisecond
	o.ShareRequestInterval = 500 * time.Millisecond
}

// within polls cond until it holds or d has passed.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func connected(n *hosttest.Node, id peer.ID) bool {
	return slices.ContainsFunc(n.Peers(), func(p network.PeerInfo) bool { return p.ID == id })
}

// TestRelayFindsPeersByBootstrap: a relay whose topology is one bootstrap
// peer connects to two more within 30 s, with the default intervals: the
// peers the bootstrap peer shares.
func TestRelayFindsPeersByBootstrap(t *testing.T) {
	bootstrap := hosttest.Start(t, 1, nil, sharing)
	c := hosttest.Start(t, 2, bootstrap.P2PAddrs(), sharing)
	d := hosttest.Start(t, 3, bootstrap.P2PAddrs(), sharing)
	hosttest.Eventually(t, "C and D connect to the bootstrap peer", func() bool { return connected(bootstrap, c.ID()) && connected(bootstrap, d.ID()) })

	relay := hosttest.Start(t, 4, bootstrap.P2PAddrs(), sharing)
	within(t, 30*time.Second, "the relay connects to C and D", func() bool { return connected(relay, c.ID()) && connected(relay, d.ID()) })
	for _, p := range relay.Peers() {
		if p.ID == c.ID() && p.Direction != network.DirectionOutbound {
			t.Errorf("the relay's connection to C is %s: it should have dialed C itself", p.Direction)
		}
	}
}

// TestTenNodesConnect: ten hosts, each but the first knowing only the one
// before it, end up all reachable from each other, each with at least
// TargetPeers (4) peers: each learned the others from its neighbours.
func TestTenNodesConnect(t *testing.T) {
	const nodes, target = 10, 4
	var hosts []*hosttest.Node
	for i := range nodes {
		var topology []string
		if i > 0 {
			topology = hosts[i-1].P2PAddrs()
		}
		hosts = append(hosts, hosttest.Start(t, byte(10+i), topology, sharing, quick, func(o *network.HostOptions) { o.TargetPeers = target }))
	}
	index := make(map[peer.ID]int)
	for i, h := range hosts {
		index[h.ID()] = i
	}
	within(t, 20*time.Second, "every node reaches every other, each with 4 peers", func() bool {
		reached := map[int]bool{0: true}
		frontier := []int{0}
		for len(frontier) > 0 {
			i := frontier[0]
			frontier = frontier[1:]
			peers := hosts[i].Peers()
			if len(peers) < target {
				return false
			}
			for _, p := range peers {
				if j, ok := index[p.ID]; ok && !reached[j] {
					reached[j] = true
					frontier = append(frontier, j)
				}
			}
		}
		return len(reached) == nodes
	})
}

// TestOptedOutPeerIsNotShared: a host without peer sharing (a pool that
// opted out) does not serve it, so identify does not list it, and a host
// that does never shares it; nor does it share the asking peer itself.
func TestOptedOutPeerIsNotShared(t *testing.T) {
	bootstrap := hosttest.Start(t, 1, nil, sharing)
	relay := hosttest.Start(t, 2, bootstrap.P2PAddrs(), sharing)
	pool := hosttest.Start(t, 3, bootstrap.P2PAddrs())
	hosttest.Eventually(t, "the relay and the pool connect", func() bool { return connected(bootstrap, relay.ID()) && connected(bootstrap, pool.ID()) })

	asker := hosttest.Raw(t, 0)
	if err := hosttest.Connect(t, asker, bootstrap); err != nil {
		t.Fatal(err)
	}
	var shared []peer.ID
	hosttest.Eventually(t, "the bootstrap peer shares the relay", func() bool {
		shared = ask(t, asker, bootstrap.ID())
		return slices.Contains(shared, relay.ID())
	})
	if slices.Contains(shared, pool.ID()) || slices.Contains(shared, asker.ID()) {
		t.Fatalf("shared %v: the pool (%s) opted out, and the asker (%s) knows itself", shared, pool.ID(), asker.ID())
	}
	if _, err := asker.NewStream(context.Background(), pool.ID(), libp2pprotocol.ID(peersharing.Spec().ID())); err == nil {
		t.Fatal("the pool serves peer sharing")
	}
}

// ask asks id for peers over a stream raw opens.
func ask(t *testing.T, raw host.Host, id peer.ID) []peer.ID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := raw.NewStream(ctx, id, libp2pprotocol.ID(peersharing.Spec().ID()))
	if err != nil {
		t.Fatal(err)
	}
	s := protocol.NewSession(ctx, protocol.Config{Spec: peersharing.Spec(), Role: protocol.Client, Stream: st})
	defer s.Close()
	infos, err := peersharing.Request(ctx, s, peersharing.MaxAmount)
	if err != nil {
		t.Fatal(err)
	}
	var ids []peer.ID
	for _, info := range infos {
		ids = append(ids, info.ID)
	}
	return ids
}

// TestDialedPeersLeaveRoomForInbound: the peers a host dialed at shared
// addresses do not count against MaxUnknownPeers, which bounds the peers
// outside its topology that dialed it.
func TestDialedPeersLeaveRoomForInbound(t *testing.T) {
	b := hosttest.Start(t, 1, nil, sharing, quick)
	c := hosttest.Start(t, 2, b.P2PAddrs(), sharing, quick, func(o *network.HostOptions) { o.TargetPeers = 1 }) // B is enough
	hosttest.Eventually(t, "C connects to B", func() bool { return connected(b, c.ID()) })
	a := hosttest.Start(t, 3, b.P2PAddrs(), sharing, quick, func(o *network.HostOptions) { o.MaxUnknownPeers = 1 })
	hosttest.Eventually(t, "A dials C, learned from B", func() bool {
		return slices.ContainsFunc(a.Peers(), func(p network.PeerInfo) bool { return p.ID == c.ID() && p.Direction == network.DirectionOutbound })
	})
	d := hosttest.Start(t, 4, a.P2PAddrs())
	hosttest.Eventually(t, "D gets in", func() bool { return connected(a, d.ID()) })
	e := hosttest.Start(t, 5, a.P2PAddrs())
	hosttest.Eventually(t, "E is refused", func() bool {
		return hosttest.Metric(t, a.Reg, "leiosnode_network_limit_refusals_total", map[string]string{"limit": "unknown_peers"}) > 0
	})
	if connected(a, e.ID()) {
		t.Fatal("E got in beyond MaxUnknownPeers")
	}
}

// TestAboveTargetPrunesDialedPeers: a topology peer that comes up late takes
// the place of the newest peer the host dialed at a shared address, once
// the host is over TargetPeers; the topology's peers are never pruned.
func TestAboveTargetPrunesDialedPeers(t *testing.T) {
	b := hosttest.Start(t, 1, nil, sharing, quick)
	c := hosttest.Start(t, 2, b.P2PAddrs(), sharing, quick, func(o *network.HostOptions) { o.TargetPeers = 1 }) // B is enough
	hosttest.Eventually(t, "C connects to B", func() bool { return connected(b, c.ID()) })

	// X is in the topology but not up yet: its port is free for now.
	free, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	xListen := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", free[0])
	xID := peerIDOf(t, 3)
	r := hosttest.Start(t, 4, append(b.P2PAddrs(), xListen+"/p2p/"+xID.String()), sharing, quick,
		func(o *network.HostOptions) { o.TargetPeers = 2 })
	hosttest.Eventually(t, "R dials C, learned from B", func() bool { return connected(r, c.ID()) })

	hosttest.Start(t, 3, nil, func(o *network.HostOptions) { o.ListenAddrs = []string{xListen} })
	hosttest.Eventually(t, "R connects to X and lets C go, saying why", func() bool {
		return connected(r, xID) && connected(r, b.ID()) && !connected(r, c.ID()) &&
			strings.Contains(r.Logs.String(), `msg="peer disconnected" peer=`+c.ID().String()) &&
			strings.Contains(r.Logs.String(), `reason="above targetPeers (2)"`)
	})
}

// peerIDOf is the peer ID of hosttest's key seed.
func peerIDOf(t *testing.T, seed byte) peer.ID {
	t.Helper()
	return testPeer(t, seed).ID
}
