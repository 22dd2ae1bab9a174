package network

import (
	"slices"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// gater is the host's libp2p connection gater. It refuses banned peers in
// both directions until their ban expires, and prefers the topology: a
// peer outside it is admitted inbound only while fewer than maxUnknown
// such peers are connected by their own dial, so peer IDs made up by the
// thousand cannot crowd out the peers the node is configured to keep, nor
// those its connection manager dialed.
type gater struct {
	scorer     *scorer
	topology   map[peer.ID]bool
	maxUnknown int
	metrics    *metrics
	// net is the host's network once it is built; connections may be
	// secured while libp2p.New still runs, and are then admitted.
	net atomic.Pointer[network.Network]
}

// newGater gates for topology, which it only reads.
func newGater(s *scorer, topology map[peer.ID]bool, maxUnknown int, m *metrics) *gater {
	return &gater{scorer: s, topology: topology, maxUnknown: maxUnknown, metrics: m}
}

// allow admits p unless it is banned.
func (g *gater) allow(p peer.ID) bool {
	if g.scorer.banned(p) {
		g.metrics.refused.Inc()
		return false
	}
	return true
}

// admitUnknown admits an inbound connection from p, outside the topology,
// if p is connected already or there is room for one more peer outside the
// topology connected only by its own dial. The count may run over by the
// handshakes completing at the same moment.
func (g *gater) admitUnknown(p peer.ID) bool {
	n := g.net.Load()
	if n == nil || g.topology[p] || (*n).Connectedness(p) == network.Connected {
		return true
	}
	unknown := 0
	for _, q := range (*n).Peers() {
		if !g.topology[q] && !outbound(*n, q) {
			unknown++
		}
	}
	if unknown < g.maxUnknown {
		return true
	}
	g.metrics.limits.WithLabelValues(limitUnknownPeers).Inc()
	return false
}

func (g *gater) InterceptPeerDial(p peer.ID) bool                 { return g.allow(p) }
func (g *gater) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool { return g.allow(p) }
func (g *gater) InterceptAccept(network.ConnMultiaddrs) bool      { return true }
func (g *gater) InterceptSecured(dir network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return g.allow(p) && (dir != network.DirInbound || g.admitUnknown(p))
}
func (g *gater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

// outbound reports whether the host dialed one of its connections to p.
func outbound(n network.Network, p peer.ID) bool {
	return slices.ContainsFunc(n.ConnsToPeer(p), func(c network.Conn) bool {
		return c.Stat().Direction == network.DirOutbound
	})
}
