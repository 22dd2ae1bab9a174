package network

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	ma "github.com/multiformats/go-multiaddr"
)

// The host's limits on what peers may hold: connections in total and per
// peer, inbound streams per peer (libp2p's resource manager), streams per
// protocol per peer (the host itself, as it serves them), and peers outside
// the topology (the gater, gating.go). A peer that trips one is refused and
// counted (leiosnode_network_limit_refusals_total, by limit); one that opens
// more streams of a protocol than it needs is also disconnected, and that
// counts against it like a violation.

// DefaultMaxStreams is Server.MaxStreams's default: a peer's client opens
// one stream per protocol, and a second may open while the server still
// tears down the one it replaces.
const DefaultMaxStreams = 2

// Limit labels of leiosnode_network_limit_refusals_total.
const (
	limitConns          = "conns"            // all connections
	limitPeerConns      = "peer_conns"       // one peer's connections
	limitPeerStreams    = "peer_streams"     // one peer's streams, or all of them
	limitProtocolStream = "protocol_streams" // one peer's streams of one protocol
	limitUnknownPeers   = "unknown_peers"    // peers outside the topology
	limitMemory         = "memory"
)

// resourceManager builds the libp2p resource manager of the host's
// limits. The topology's addresses are allowlisted: when the limits are
// reached, its peers still get in.
func (h *Host) resourceManager() (network.ResourceManager, error) {
	o := h.opts
	limits := rcmgr.PartialLimitConfig{
		System: rcmgr.ResourceLimits{
			Conns:        rcmgr.LimitVal(o.MaxConns),
			ConnsInbound: rcmgr.LimitVal(o.MaxConns),
		},
		PeerDefault: rcmgr.ResourceLimits{
			Conns:          rcmgr.LimitVal(o.MaxConnsPerPeer),
			ConnsInbound:   rcmgr.LimitVal(o.MaxConnsPerPeer),
			ConnsOutbound:  rcmgr.LimitVal(o.MaxConnsPerPeer),
			StreamsInbound: rcmgr.LimitVal(o.MaxStreamsPerPeer),
		},
	}.Build(rcmgr.DefaultLimits.AutoScale())
	var allow []ma.Multiaddr
	for _, info := range h.topology {
		addrs, err := peer.AddrInfoToP2pAddrs(&info)
		if err != nil {
			return nil, fmt.Errorf("network: topology peer %s: %w", info.ID, err)
		}
		allow = append(allow, slices.DeleteFunc(addrs, func(a ma.Multiaddr) bool { return !hasIP(a) })...)
	}
	mgr, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(limits),
		rcmgr.WithAllowlistedMultiaddrs(allow),
		rcmgr.WithMetrics(limitReporter{h.metrics}),
		rcmgr.WithMetricsDisabled(), // its own Prometheus metrics would go to the global registry
	)
	if err != nil {
		return nil, fmt.Errorf("network: resource manager: %w", err)
	}
	return mgr, nil
}

// hasIP reports whether a names an IP address (the allowlist takes no DNS
// names).
func hasIP(a ma.Multiaddr) bool {
	for _, c := range a {
		if code := c.Protocol().Code; code == ma.P_IP4 || code == ma.P_IP6 {
			return true
		}
	}
	return false
}

// limitReporter counts what the resource manager refuses; what it allows
// it does not count. It is called inside the resource manager, so it only
// counts.
type limitReporter struct{ m *metrics }

func (r limitReporter) refused(limit string) { r.m.limits.WithLabelValues(limit).Inc() }

func (limitReporter) AllowConn(network.Direction, bool)        {}
func (r limitReporter) BlockConn(network.Direction, bool)      { r.refused(limitConns) }
func (limitReporter) AllowStream(peer.ID, network.Direction)   {}
func (r limitReporter) BlockStream(peer.ID, network.Direction) { r.refused(limitPeerStreams) }
func (limitReporter) AllowPeer(peer.ID)                        {}
func (r limitReporter) BlockPeer(peer.ID)                      { r.refused(limitPeerConns) }
func (limitReporter) AllowProtocol(protocol.ID)                {}
func (r limitReporter) BlockProtocol(protocol.ID)              { r.refused(limitProtocolStream) }
func (r limitReporter) BlockProtocolPeer(protocol.ID, peer.ID) { r.refused(limitProtocolStream) }
func (limitReporter) AllowService(string)                      {}
func (r limitReporter) BlockService(string)                    { r.refused(limitPeerStreams) }
func (r limitReporter) BlockServicePeer(string, peer.ID)       { r.refused(limitPeerStreams) }
func (limitReporter) AllowMemory(int)                          {}
func (r limitReporter) BlockMemory(int)                        { r.refused(limitMemory) }

// streamCount counts the streams each peer has open of each protocol, as
// the host serves them.
type streamCount struct {
	mu   sync.Mutex // guards open; held for a map update only
	open map[peerProtocol]int
}

type peerProtocol struct {
	peer     peer.ID
	protocol string
}

// acquire counts a new stream of p's, unless p already has max of the
// protocol open; release uncounts it.
func (c *streamCount) acquire(p peer.ID, protocol string, max int) (release func(), ok bool) {
	k := peerProtocol{p, protocol}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[k] >= max {
		return nil, false
	}
	c.open[k]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.open[k]--; c.open[k] == 0 {
			delete(c.open, k)
		}
	}, true
}

// overLimit refuses a peer that tripped a limit only a misbehaving peer
// trips: it is counted, logged, disconnected, and the trip counts against
// it like a violation (repeat offenders are gated).
func (h *Host) overLimit(id peer.ID, limit, detail string) {
	h.metrics.limits.WithLabelValues(limit).Inc()
	h.lines.Log(context.Background(), h.log, slog.LevelWarn, string(id), "peer over a limit; disconnected", "peer", id, "limit", limit, "detail", detail)
	if h.scorer.violation(id) {
		h.metrics.bans.Inc()
		h.log.Warn("peer banned", "peer", id, "for", h.opts.BanDuration)
	}
	h.closePeer(id, "over the "+limit+" limit")
}
