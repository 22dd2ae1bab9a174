package network_test

import (
	"context"
	"strings"
	"testing"
	"time"

	libp2pnetwork "github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
	"github.com/leiosnode/leiosnode/network/internal/ping"
)

// TestMoreStreamsOfAProtocolThanNeeded: a peer may hold DefaultMaxStreams
// streams of a protocol; the next one is refused, counted, and the peer is
// disconnected.
func TestMoreStreamsOfAProtocolThanNeeded(t *testing.T) {
	victim := hosttest.Start(t, 1, nil, func(o *network.HostOptions) {
		o.Services = []network.Service{pingService{}}
	})
	attacker := hosttest.Raw(t, 0)
	if err := hosttest.Connect(t, attacker, victim); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	pingID := libp2pprotocol.ID(ping.Spec(time.Second, 0).ID())
	for i := range network.DefaultMaxStreams {
		s, err := attacker.NewStream(ctx, victim.ID(), pingID)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Reset()
		if err := pingOnce(s, uint64(i)); err != nil { // served: counted by now
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	extra, err := attacker.NewStream(ctx, victim.ID(), pingID)
	if err == nil {
		defer extra.Reset()
		err = pingOnce(extra, 9)
	}
	if err == nil {
		t.Fatal("a stream beyond the limit was served")
	}
	hosttest.Eventually(t, "the peer is disconnected", func() bool { return len(victim.Peers()) == 0 })
	if n := hosttest.Metric(t, victim.Reg, "leiosnode_network_limit_refusals_total", map[string]string{"limit": "protocol_streams"}); n != 1 {
		t.Fatalf("%v refusals counted, want 1", n)
	}
	if logs := victim.Logs.String(); !strings.Contains(logs, "over a limit") || !strings.Contains(logs, attacker.ID().String()) {
		t.Fatalf("the refusal is not logged with the peer:\n%s", logs)
	}
}

// TestManyStreamsOfAPeer: a peer that opens streams by the hundred, of
// any protocol or none, is held to MaxStreamsPerPeer, and the refusals
// are counted.
func TestManyStreamsOfAPeer(t *testing.T) {
	const limit = 8
	victim := hosttest.Start(t, 1, nil, func(o *network.HostOptions) {
		o.Services = []network.Service{pingService{}}
		o.MaxStreamsPerPeer = limit
	})
	attacker := hosttest.Raw(t, 0)
	if err := hosttest.Connect(t, attacker, victim); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for range 10 * limit {
		// A bare stream, never negotiated: the victim's resource manager
		// takes or refuses it as it arrives.
		s, err := attacker.Network().NewStream(libp2pnetwork.WithNoDial(ctx, "test"), victim.ID())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Reset()
		_, _ = s.Write([]byte{0x13})
	}
	// Beyond the limit, less the streams libp2p's own protocols hold.
	hosttest.Eventually(t, "the streams beyond the limit are refused", func() bool {
		return hosttest.Metric(t, victim.Reg, "leiosnode_network_limit_refusals_total", map[string]string{"limit": "peer_streams"}) >= 9*limit
	})
}

// TestUnknownPeersAreCapped: peers outside the topology get in while fewer
// than MaxUnknownPeers of them are connected; the rest are refused and
// counted, and a topology peer is admitted all the same.
func TestUnknownPeersAreCapped(t *testing.T) {
	const maxUnknown = 2
	known := hosttest.Raw(t, 9)
	victim := hosttest.Start(t, 1, []string{"/ip4/127.0.0.1/tcp/1/p2p/" + known.ID().String()}, func(o *network.HostOptions) {
		o.MaxUnknownPeers = maxUnknown
	})
	for i := range maxUnknown + 3 {
		stranger := hosttest.Raw(t, 0)
		err := hosttest.Connect(t, stranger, victim)
		if i < maxUnknown && err != nil {
			t.Fatalf("stranger %d refused: %v", i, err)
		}
		if i < maxUnknown {
			hosttest.Eventually(t, "the stranger is connected", func() bool { return connectedTo(victim, stranger.ID()) })
			continue
		}
		// Refused once authenticated: the dial fails, or the connection
		// is closed at once.
		time.Sleep(100 * time.Millisecond)
		if connectedTo(victim, stranger.ID()) {
			t.Fatalf("stranger %d admitted beyond the limit", i)
		}
	}
	if n := hosttest.Metric(t, victim.Reg, "leiosnode_network_limit_refusals_total", map[string]string{"limit": "unknown_peers"}); n < 3 {
		t.Fatalf("%v refusals counted, want 3", n)
	}
	if err := hosttest.Connect(t, known, victim); err != nil {
		t.Fatalf("the topology peer was refused: %v", err)
	}
	hosttest.Eventually(t, "the topology peer is connected", func() bool { return connectedTo(victim, known.ID()) })
}

func connectedTo(n *hosttest.Node, id peer.ID) bool {
	for _, p := range n.Peers() {
		if p.ID == id {
			return true
		}
	}
	return false
}
