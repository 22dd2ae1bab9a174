package hostile

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	p2pnetwork "github.com/libp2p/go-libp2p/core/network"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// dialTimeout bounds an identity's dial of the node: a loaded machine
// shakes hands slowly, and an identity that gave up attacks nothing.
const dialTimeout = 30 * time.Second

// NewIdentity is a libp2p host of a fresh ed25519 key that only dials,
// over what the node speaks (TCP, Noise, Yamux), and holds no limits of its
// own: what is measured is the node's. Its dials may take dialTimeout, not
// libp2p's 5 s for a local address: dozens of identities shaking hands with
// one node at once on a loaded machine take longer.
func NewIdentity() (host.Host, error) {
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, err
	}
	h, err := libp2p.New(
		libp2p.Identity(key),
		libp2p.NoListenAddrs,
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ResourceManager(&p2pnetwork.NullResourceManager{}),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
		libp2p.SwarmOpts(swarm.WithDialTimeout(dialTimeout), swarm.WithDialTimeoutLocal(dialTimeout)),
	)
	if err != nil {
		return nil, fmt.Errorf("hostile: a libp2p host: %w", err)
	}
	return h, nil
}

// identity is a NewIdentity connected to the node. handlers, if any, are
// set before it connects, so identify tells the node it serves them.
func identity(ctx context.Context, t Target, tally *Tally, handlers map[libp2pprotocol.ID]p2pnetwork.StreamHandler) (host.Host, error) {
	h, err := NewIdentity()
	if err != nil {
		return nil, err
	}
	for id, handle := range handlers {
		h.SetStreamHandler(id, handle)
	}
	cctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if err := h.Connect(cctx, t.Peer); err != nil {
		_ = h.Close()
		tally.Failed.Add(1)
		return nil, fmt.Errorf("hostile: connecting to %s: %w", t.Peer.ID, err)
	}
	tally.Identities.Add(1)
	return h, nil
}

// disconnected waits until h is no longer connected to the node (it cut
// or banned the identity) and says true, or until ctx ends and says false.
func disconnected(ctx context.Context, h host.Host, t Target) bool {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if h.Network().Connectedness(t.Peer.ID) != p2pnetwork.Connected {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// frames encodes msgs as the engine frames them on the wire, one after
// another.
func frames(msgs ...protocol.Message) ([]byte, error) {
	var out []byte
	for _, m := range msgs {
		body, err := protocol.Encode(m)
		if err != nil {
			return nil, fmt.Errorf("hostile: encoding %T: %w", m, err)
		}
		out = protocol.AppendFrame(out, body)
	}
	return out, nil
}
