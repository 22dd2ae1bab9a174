package network

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"

	"github.com/leiosnode/leiosnode/internal/pause"
)

// keepConnected dials a topology peer whenever it is not connected, until
// ctx ends. Failed dials, and connections that drop within MaxBackoff (a
// peer that refuses us after the handshake, say), back off exponentially.
func (h *Host) keepConnected(ctx context.Context, info peer.AddrInfo) {
	backoff := h.opts.MinBackoff
	retry := func() bool {
		ok := pause.For(ctx, backoff)
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
		if err != nil && ctx.Err() == nil {
			h.dialFailed(slog.LevelWarn, info, err, backoff)
		}
		if _, ok := h.connectedPeer(info.ID); !ok && !retry() {
			return
		}
	}
}

// dialFailed logs a failed dial of info at level: a topology peer's at
// warn, a learned peer's at info. An address that answers with another
// peer ID (a topology entry gone stale, or a peer sharing a wrong one) is
// logged at warn whoever's it is, naming the address and the ID that
// answered.
func (h *Host) dialFailed(level slog.Level, info peer.AddrInfo, err error, retryIn time.Duration) {
	var dialErr *swarm.DialError
	if errors.As(err, &dialErr) {
		for _, te := range dialErr.DialErrors {
			var mismatch sec.ErrPeerIDMismatch
			if errors.As(te.Cause, &mismatch) {
				h.log.Warn("address answers with another peer ID", "peer", info.ID, "addr", te.Address,
					"answered", mismatch.Actual, "retryIn", retryIn)
				return
			}
		}
	}
	h.log.Log(context.Background(), level, "dial failed", "peer", info.ID, "addrs", info.Addrs, "err", err, "retryIn", retryIn)
}
