package network

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// keepConnected dials a topology peer whenever it is not connected, until
// ctx ends. Failed dials, and connections that drop within MaxBackoff (a
// peer that refuses us after the handshake, say), back off exponentially.
func (h *Host) keepConnected(ctx context.Context, info peer.AddrInfo) {
	backoff := h.opts.MinBackoff
	retry := func() bool {
		ok := sleep(ctx, backoff)
		backoff = min(2*backoff, h.opts.MaxBackoff)
		return ok
	}
	for ctx.Err() == nil {
		if gone, ok := h.connectedPeer(info.ID); ok {
			since := time.Now()
			select {
			case <-gone:
			case <-ctx.Done():
				return
			}
			if time.Since(since) > h.opts.MaxBackoff {
				backoff = h.opts.MinBackoff
			} else if !retry() {
				return
			}
			continue
		}
		// A topology peer is dialed at its topology addresses only: the
		// addresses it announced (identify puts them in the peerstore) may
		// bypass the route the topology names, such as a proxy.
		h.host.Peerstore().ClearAddrs(info.ID)
		// Our own backoff paces the dials; libp2p's would add its own.
		dialCtx, cancel := context.WithTimeout(network.WithForceDirectDial(ctx, "topology"), h.opts.DialTimeout)
		err := h.host.Connect(dialCtx, info)
		cancel()
		if err != nil {
			h.log.Debug("dial failed", "peer", info.ID, "err", err, "retry in", backoff)
		}
		if _, ok := h.connectedPeer(info.ID); !ok && !retry() {
			return
		}
	}
}
