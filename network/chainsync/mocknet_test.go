package chainsync_test

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	"github.com/multiformats/go-multiaddr"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

// Hosts built on mocknet links (latency, bandwidth) sync like TCP ones: the
// way many-node tests and benchmarks run on one machine.
func TestChainSyncOverMocknetLinks(t *testing.T) {
	net := mocknet.New()
	t.Cleanup(func() { _ = net.Close() })
	var hosts []*hosttest.Node
	var chains []*chaintest.Chain
	for i := range 3 {
		sk, err := crypto.UnmarshalEd25519PrivateKey(hosttest.Key(byte(i + 1)))
		if err != nil {
			t.Fatal(err)
		}
		addr := multiaddr.StringCast("/ip4/127.0.0.1/tcp/4000")
		lh, err := net.AddPeer(sk, addr)
		if err != nil {
			t.Fatal(err)
		}
		chains = append(chains, chaintest.New(10))
		var topology []string
		if i > 0 {
			topology = hosts[i-1].P2PAddrs()
		}
		hosts = append(hosts, startNode(t, byte(i+1), chains[i], topology, func(o *network.HostOptions) {
			o.Libp2p = lh
		}))
	}
	net.SetLinkDefaults(mocknet.LinkOptions{Latency: 20 * time.Millisecond, Bandwidth: 50 << 20 / 8})
	if err := net.LinkAll(); err != nil {
		t.Fatal(err)
	}
	forger := chaintest.NewForger(1)
	if err := chaintest.AddAll(chains[0], forger.Extend(nil, 20, "m")); err != nil {
		t.Fatal(err)
	}
	hosttest.Eventually(t, "the line of mocknet hosts converges", sameTip(chains...))
}
