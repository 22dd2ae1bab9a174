package notify_test

import (
	"context"
	"crypto/ed25519"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leios/protocolset"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/notify"
)

// hostNode is a libp2p host on loopback running LeiosNotify over its own
// LeiosDB. Its sinks stand in for the node's fetch: an announcement
// inserts the point, an offer copies the body or closure from the offering
// peer's LeiosDB into its own — the way LeiosFetch would, minus the wire.
type hostNode struct {
	host  *network.Host
	db    *leiosdb.DB
	relay *notify.Relay

	mu     sync.Mutex
	events []string // "<from>: <label>", in callback order
}

// peerDBs maps each host to its LeiosDB, for the stand-in fetch.
type peerDBs struct {
	mu  sync.Mutex
	dbs map[peer.ID]*leiosdb.DB
}

func (p *peerDBs) get(id peer.ID) *leiosdb.DB {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dbs[id]
}

func startHostNode(t *testing.T, n *testNet, seed byte, dbs *peerDBs, topology []string, sets ...protocolset.Set) *hostNode {
	t.Helper()
	hn := &hostNode{db: openTestDB(t)}
	record := func(from peer.ID, e string) {
		hn.mu.Lock()
		defer hn.mu.Unlock()
		hn.events = append(hn.events, from.String()+": "+e)
	}
	fail := func(err error) {
		if err != nil {
			t.Errorf("host %d: %v", seed, err)
		}
	}
	hn.relay = n.relay(t, func(o *notify.Options) {
		o.OnAnnouncement = func(from peer.ID, h *block.Header) {
			record(from, "ann("+h.Point().String()+")")
			if h.Announcement != nil {
				fail(hn.db.InsertPoint(block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash}, h.Announcement.EbSize))
			}
		}
		o.OnBlockOffer = func(from peer.ID, p block.Point, size uint64) {
			record(from, "offer("+p.String()+")")
			if info, _, _ := hn.db.PointInfo(p); info.HasBody {
				return
			}
			body, ok, err := dbs.get(from).Body(p.Hash)
			if err != nil || !ok || uint64(len(body)) != size {
				t.Errorf("host %d: offered body %s not held by the offerer (%v)", seed, p, err)
				return
			}
			_, err = hn.db.InsertBody(p, body)
			fail(err)
		}
		o.OnBlockTxsOffer = func(from peer.ID, p block.Point) {
			record(from, "txs("+p.String()+")")
			// As fetch would, take nothing already held: a peer's offer
			// of a closure it got from here may arrive as the test ends
			// and that peer's LeiosDB closes.
			if info, _, _ := hn.db.PointInfo(p); info.Complete() {
				return
			}
			txs, err := dbs.get(from).Closure(p.Hash)
			fail(err)
			_, err = hn.db.InsertTxs(block.HashTxs(txs))
			fail(err)
		}
	})
	s := make([]byte, ed25519.SeedSize)
	s[0], s[1] = seed, 0x99
	var set protocolset.Set // both
	if len(sets) > 0 {
		set = sets[0]
	}
	svc, err := notify.NewService(notify.ServiceOptions{Relay: hn.relay, Protocols: set})
	if err != nil {
		t.Fatal(err)
	}
	h, err := network.NewHost(network.HostOptions{
		Key:         ed25519.NewKeyFromSeed(s),
		ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"},
		Topology:    topology,
		Services:    []network.Service{svc},
		MinBackoff:  50 * time.Millisecond,
		MaxBackoff:  400 * time.Millisecond,
		Logger:      quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	hn.host = h
	dbs.mu.Lock()
	dbs.dbs[h.ID()] = hn.db
	dbs.mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	runRelay(t, hn.relay, hn.db)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("host %d: %v", seed, err)
		}
	})
	return hn
}

// eventsFrom lists the events a node's sinks got from one peer.
func (hn *hostNode) eventsFrom(id peer.ID) []string {
	hn.mu.Lock()
	defer hn.mu.Unlock()
	var out []string
	prefix := id.String() + ": "
	for _, e := range hn.events {
		if len(e) > len(prefix) && e[:len(prefix)] == prefix {
			out = append(out, e[len(prefix):])
		}
	}
	return out
}

// TestThreeHosts: A forges an EB (announce, then body, then closure into
// its LeiosDB, as the forge does); B hears announcement → block offer →
// block-txs offer from A in that order, fetches, and relays to C, which
// hears the same from B — over the CIP's streams, the prototype's, and a
// chain of both: A speaks only the CIP's, C only the prototype's, B both.
func TestThreeHosts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		a, b, c protocolset.Set
	}{
		{"cip", protocolset.CIP, protocolset.CIP, protocolset.CIP},
		{"prototype", protocolset.Prototype, protocolset.Prototype, protocolset.Prototype},
		{"cip, both, prototype", protocolset.CIP, protocolset.Both, protocolset.Prototype},
	} {
		t.Run(tc.name, func(t *testing.T) { threeHosts(t, tc.a, tc.b, tc.c) })
	}
}

func threeHosts(t *testing.T, setA, setB, setC protocolset.Set) {
	n := newTestNet(t, 1)
	dbs := &peerDBs{dbs: make(map[peer.ID]*leiosdb.DB)}
	a := startHostNode(t, n, 1, dbs, nil, setA)
	b := startHostNode(t, n, 2, dbs, a.host.P2PAddrs(), setB)
	c := startHostNode(t, n, 3, dbs, b.host.P2PAddrs(), setC)
	eventually(t, "A–B and B–C connected", func() bool {
		return len(a.host.Peers()) == 1 && len(b.host.Peers()) == 2 && len(c.host.Peers()) == 1
	})

	e := newEB(t, 1, 2, 3, 4)
	h := n.header(500, 0, e.announcement(), 0)
	p := block.Point{Slot: 500, Hash: e.body.Hash()}
	if err := a.relay.Announce(h); err != nil {
		t.Fatal(err)
	}
	store(t, a.db, p, e, true)

	want := []string{"ann(" + h.Point().String() + ")", "offer(" + p.String() + ")", "txs(" + p.String() + ")"}
	for _, hop := range []struct {
		name     string
		to, from *hostNode
	}{{"A→B", b, a}, {"B→C", c, b}} {
		eventually(t, hop.name+" closure offered", func() bool { return len(hop.to.eventsFrom(hop.from.host.ID())) >= 3 })
		got := hop.to.eventsFrom(hop.from.host.ID())
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: callbacks %v, want %v first", hop.name, got, want)
			}
		}
	}
	// The sinks record a callback before they act on it.
	eventually(t, "C holds the whole closure", func() bool {
		info, ok, err := c.db.PointInfo(p)
		return err == nil && ok && info.Complete()
	})
}
