package hosttest

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
)

// Raw is a bare libp2p host that speaks the wire by hand, as a
// misbehaving peer would: no services, no limits, a fresh peer ID each
// time (seed 0) or the ID of Key(seed). It is closed when the test ends.
func Raw(t *testing.T, seed byte) host.Host {
	t.Helper()
	identity := libp2p.RandomIdentity
	if seed != 0 {
		key, err := crypto.UnmarshalEd25519PrivateKey(Key(seed))
		if err != nil {
			t.Fatal(err)
		}
		identity = libp2p.Identity(key)
	}
	h, err := libp2p.New(
		identity,
		libp2p.NoListenAddrs,
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// Connect connects raw to n, or returns why it could not.
func Connect(t *testing.T, raw host.Host, n *Node) error {
	t.Helper()
	target, err := peer.AddrInfoFromString(n.P2PAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return raw.Connect(ctx, *target)
}
