package network

import (
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// gater is the host's libp2p connection gater. It refuses banned peers in
// both directions until their ban expires, and prefers the topology: a
// peer outside it is admitted inbound only while fewer than maxUnknown
// such peers are connected, so peer IDs made up by the thousand cannot
// crowd out the peers the node is configured to keep.
type gater struct {
	scorer     *scorer
	topology   map[peer.ID]bool
	maxUnknown int
	metrics    *metrics
	// net is the host's network once it is built; connections may be
	// secured while libp2p.New still runs, and are then admitted.
	net atomic.Pointer[network.Network]
}

func newGater(s *scorer, topology []peer.AddrInfo, maxUnknown int, m *metrics) *gater {
	g := &gater{scorer: s, topology: make(map[peer.ID]bool), maxUnknown: maxUnknown, metrics: m}
	for _, info := range topology {
		g.topology[info.ID] = true
	}
	return g
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
// if p is connected already or there is room for one more such peer. The
// count may run over by the handshakes completing at the same moment.
func (g *gater) admitUnknown(p peer.ID) bool {
	n := g.net.Load()
	if n == nil || g.topology[p] || (*n).Connectedness(p) == network.Connected {
		return true
	}
	unknown := 0
	for _, q := range (*n).Peers() {
		if !g.topology[q] {
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
