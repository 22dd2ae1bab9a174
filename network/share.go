package network

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// What the host tells a peer that asks for peers (peer sharing), and what
// it learns from identify to decide it.

// maxListenAddrs bounds the listen addresses kept of one peer, whatever it
// announced.
const maxListenAddrs = 16

// addrScope orders where an address can be reached from.
type addrScope int

const (
	scopeLoopback addrScope = iota // this machine
	scopePrivate                   // a private network (RFC 1918, ULA, link-local, …)
	scopePublic                    // anywhere
)

func scopeOf(a ma.Multiaddr) addrScope {
	switch {
	case manet.IsIPLoopback(a):
		return scopeLoopback
	case manet.IsPublicAddr(a):
		return scopePublic
	}
	return scopePrivate
}

// peersToShare are up to amount connected peers to share with requester,
// in random order. It shares a peer only if identify lists peer sharing for
// it (a peer that does not share is not shared), and only with the
// addresses requester can reach: the one this host dialed it at and those
// it announced, none unspecified, and none less public than requester's
// own address — a peer on a public address is never told a loopback or
// private one, a peer on a private network never a loopback one. A peer
// left without an address (one that dialed in and announced none) is not
// shared.
func (h *Host) peersToShare(requester peer.ID, amount int) []peer.AddrInfo {
	net := h.host.Network()
	conns := net.ConnsToPeer(requester)
	if len(conns) == 0 || amount <= 0 {
		return nil
	}
	reach := scopeOf(conns[0].RemoteMultiaddr())
	h.mu.Lock()
	ids := slices.Collect(maps.Keys(h.live))
	announced := maps.Clone(h.listenAddrs) // the slices are replaced, never changed
	h.mu.Unlock()
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	var out []peer.AddrInfo
	for _, id := range ids {
		if len(out) == amount {
			break
		}
		if id == requester || !h.sharesPeers(id) {
			continue
		}
		var addrs []ma.Multiaddr
		for _, c := range net.ConnsToPeer(id) {
			if c.Stat().Direction == network.DirOutbound {
				addrs = append(addrs, c.RemoteMultiaddr())
			}
		}
		if addrs = shareable(append(addrs, announced[id]...), reach); len(addrs) > 0 {
			out = append(out, peer.AddrInfo{ID: id, Addrs: addrs})
		}
	}
	return out
}

// sharesPeers reports whether identify lists the peer-sharing protocol for
// id.
func (h *Host) sharesPeers(id peer.ID) bool {
	if len(h.sharingProtocols) == 0 {
		return false
	}
	ok, err := h.host.Peerstore().SupportsProtocols(id, h.sharingProtocols...)
	return err == nil && len(ok) > 0
}

// shareable are the distinct TCP addresses of addrs, in order, that a peer
// reaching this host from an address of scope reach can reach too.
func shareable(addrs []ma.Multiaddr, reach addrScope) []ma.Multiaddr {
	var out []ma.Multiaddr
	for _, a := range addrs {
		if _, err := a.ValueForProtocol(ma.P_TCP); err != nil || manet.IsIPUnspecified(a) || scopeOf(a) < reach {
			continue
		}
		if _, err := a.ValueForProtocol(ma.P_P2P); err == nil {
			continue // a relayed or otherwise peer-qualified address
		}
		if !slices.ContainsFunc(out, a.Equal) {
			out = append(out, a)
		}
	}
	return out
}

// watchIdentify keeps the listen addresses each connected peer announces,
// until ctx ends, and wakes the connection manager: a newly identified
// peer may be one to ask for peers.
func (h *Host) watchIdentify(ctx context.Context, sub event.Subscription) {
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-sub.Out():
			if !ok {
				return
			}
			ev, ok := e.(event.EvtPeerIdentificationCompleted)
			if !ok {
				continue
			}
			h.mu.Lock()
			// Under mu, as reconcile forgets a peer's addresses when it
			// disconnects: a late event never brings them back.
			if h.host.Network().Connectedness(ev.Peer) == network.Connected {
				h.listenAddrs[ev.Peer] = slices.Clone(ev.ListenAddrs[:min(len(ev.ListenAddrs), maxListenAddrs)])
			}
			h.mu.Unlock()
			h.conns.poke()
		}
	}
}
