package network_test

import (
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

// logged reports whether logs have a line at level with message msg and
// every attribute of attrs, as the text handler writes them.
func logged(logs, level, msg string, attrs ...string) bool {
	for line := range strings.Lines(logs) {
		if !strings.Contains(line, "level="+level+" ") || !strings.Contains(line, fmt.Sprintf("msg=%q", msg)) {
			continue
		}
		all := true
		for _, a := range attrs {
			all = all && strings.Contains(line, " "+a)
		}
		if all {
			return true
		}
	}
	return false
}

// listenAddr is n's listen address, without its peer ID.
func listenAddr(t *testing.T, n *hosttest.Node) ma.Multiaddr {
	t.Helper()
	info, err := peer.AddrInfoFromString(n.P2PAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	return info.Addrs[0]
}

func peerID(t *testing.T, key ed25519.PrivateKey) peer.ID {
	t.Helper()
	k, err := crypto.UnmarshalEd25519PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestConnectionsAreLogged: a connection is logged at info on both ends
// with the peer, its address and who dialed; a disconnection with its
// reason; a topology peer that cannot be dialed at warn with its
// addresses.
func TestConnectionsAreLogged(t *testing.T) {
	a := hosttest.Start(t, 91, nil)
	b := hosttest.Start(t, 92, a.P2PAddrs())
	hosttest.Eventually(t, "B connects to A", func() bool { return len(a.Peers()) == 1 })
	hosttest.Eventually(t, "both log the connection", func() bool {
		return logged(a.Logs.String(), "INFO", "peer connected", "peer="+b.ID().String(), "addr=/ip4/127.0.0.1/tcp/", "direction=inbound", "topology=false") &&
			logged(b.Logs.String(), "INFO", "peer connected", "peer="+a.ID().String(), "addr="+listenAddr(t, a).String()+" ", "direction=outbound", "topology=true")
	})
	got := a.Peers()[0]
	if got.ID != b.ID() || got.Direction != network.DirectionInbound || !strings.HasPrefix(got.Addr, "/ip4/127.0.0.1/tcp/") || got.Since.IsZero() {
		t.Fatalf("A lists B as %+v", got)
	}

	addrA := listenAddr(t, a).String()
	a.Disconnect(b.ID(), "test")
	hosttest.Eventually(t, "both log the disconnection, with its reason", func() bool {
		return logged(a.Logs.String(), "INFO", "peer disconnected", "peer="+b.ID().String(), `reason="banned: test"`) &&
			logged(b.Logs.String(), "INFO", "peer disconnected", "peer="+a.ID().String(), "addr="+addrA+" ", `reason="closed by the peer or lost"`)
	})
	// Once A is gone, B's redials fail, loudly.
	a.Stop()
	hosttest.Eventually(t, "B logs its failed dials", func() bool {
		return logged(b.Logs.String(), "WARN", "dial failed", "peer="+a.ID().String(), "addrs=["+addrA+"]")
	})
}

// TestPeerIDMismatchIsLogged: a topology address that answers with another
// peer ID is logged at warn, naming the address, the peer expected and the
// one that answered; the host does not keep the connection.
func TestPeerIDMismatchIsLogged(t *testing.T) {
	a := hosttest.Start(t, 93, nil)
	expected := peerID(t, hosttest.Key(94))
	stale := listenAddr(t, a).String() + "/p2p/" + expected.String()
	c := hosttest.Start(t, 95, []string{stale})
	hosttest.Eventually(t, "C logs the mismatch", func() bool {
		return logged(c.Logs.String(), "WARN", "address answers with another peer ID",
			"peer="+expected.String(), "addr="+listenAddr(t, a).String()+" ", "answered="+a.ID().String())
	})
	if n := len(c.Peers()); n != 0 {
		t.Fatalf("C kept %d peers", n)
	}
}

// TestListenAddressInUse: a host cannot listen where another already
// does; libp2p's SO_REUSEPORT would otherwise let both listen, each
// getting some of the connections.
func TestListenAddressInUse(t *testing.T) {
	a := hosttest.Start(t, 96, nil)
	h, err := network.NewHost(network.HostOptions{Key: hosttest.Key(97), ListenAddrs: []string{listenAddr(t, a).String()}})
	if err == nil {
		_ = h.Close()
		t.Fatal("a second host listens on the first one's address")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("error %q does not say the address is in use", err)
	}
}
