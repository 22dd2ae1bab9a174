package network

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// connManager keeps the host at its target of peers
// (HostOptions.TargetPeers), with the addresses peer sharing brings.
//
// The topology comes first: keepConnected dials its peers whatever the
// count, they count toward the target, and they are never pruned. Below
// the target the manager dials peers it learned, each with exponential
// backoff after a failure and forgotten after maxDialFailures in a row; when
// it knows too few it asks connected peers that share for more, each at
// most once per ShareRequestInterval. Above the target (the topology alone
// may exceed it) it closes the newest peers it dialed. Peers that dialed
// this host count neither way: the gater bounds them.
type connManager struct {
	h       *Host
	sharing PeerSharing
	wake    chan struct{} // cap 1: look again now

	// mu guards the fields below. It is never held while dialing or
	// asking; lock order: mu, then the host's mu.
	mu      sync.Mutex
	known   map[peer.ID]*candidate
	asked   map[peer.ID]time.Time // peers asked within ShareRequestInterval
	dialing int                   // dials in flight
	asking  int                   // requests in flight
}

// candidate is a peer learned by peer sharing.
type candidate struct {
	addrs    []ma.Multiaddr
	failures int       // dials failed in a row
	next     time.Time // not dialed again before
	dialing  bool
}

// maxDialFailures in a row make the manager forget a learned peer; a peer
// that still has it connected may share it again.
const maxDialFailures = 5

// asksPerRound bounds the peers asked for peers at once.
const asksPerRound = 2

func newConnManager(h *Host, sharing PeerSharing) *connManager {
	return &connManager{
		h:       h,
		sharing: sharing,
		wake:    make(chan struct{}, 1),
		known:   make(map[peer.ID]*candidate),
		asked:   make(map[peer.ID]time.Time),
	}
}

// poke makes the manager look again now. Safe on a nil manager (a host
// without peer sharing) and in libp2p's callbacks: it never blocks.
func (m *connManager) poke() {
	if m == nil {
		return
	}
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// run looks at the peers every PeerSharingInterval and whenever poked,
// until ctx ends. The dials and requests it starts run in the host's
// errgroup and end with ctx.
func (m *connManager) run(ctx context.Context) {
	t := time.NewTicker(m.h.opts.PeerSharingInterval)
	defer t.Stop()
	for {
		m.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.wake:
		}
	}
}

// round prunes above the target; below it, it dials learned peers, and
// asks for more when it knows too few to reach the target.
func (m *connManager) round(ctx context.Context) {
	target := m.h.opts.TargetPeers
	kept, prunable := m.h.keptPeers()
	if over := kept - target; over > 0 {
		for _, id := range prunable[:min(over, len(prunable))] {
			m.h.closePeer(id, fmt.Sprintf("above targetPeers (%d)", target))
		}
		return
	}
	live := m.h.livePeers()
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	need := target - kept - m.dialing
	for id, c := range m.known {
		if need <= 0 {
			break
		}
		if c.dialing || now.Before(c.next) || slices.Contains(live, id) || m.h.scorer.banned(id) {
			continue
		}
		c.dialing = true
		m.dialing++
		need--
		info := peer.AddrInfo{ID: id, Addrs: c.addrs} // learn replaces c.addrs under mu, never changes it
		m.h.group.Go(func() error { m.dial(ctx, info, c); return nil })
	}
	if need <= 0 || m.asking > 0 {
		return
	}
	for id, at := range m.asked {
		if now.Sub(at) >= m.h.opts.ShareRequestInterval {
			delete(m.asked, id)
		}
	}
	asks := 0
	for _, id := range live {
		if asks == asksPerRound {
			break
		}
		if _, recent := m.asked[id]; recent || !m.h.sharesPeers(id) {
			continue
		}
		m.asked[id] = now
		m.asking++
		asks++
		m.h.group.Go(func() error { m.ask(ctx, id); return nil })
	}
}

// dial dials a learned peer, and paces its next dial: after a failure by
// exponential backoff, after a success by MaxBackoff, so that a peer that
// drops this host at once is not redialed in a loop.
func (m *connManager) dial(ctx context.Context, info peer.AddrInfo, c *candidate) {
	o := m.h.opts
	// Our own backoff paces the dials; libp2p's would add its own.
	dialCtx, cancel := context.WithTimeout(network.WithForceDirectDial(ctx, "peer sharing"), o.DialTimeout)
	err := m.h.host.Connect(dialCtx, info)
	cancel()
	if ctx.Err() != nil {
		return
	}
	m.mu.Lock()
	m.dialing--
	c.dialing = false
	wait := o.MaxBackoff
	if err != nil {
		c.failures++
		wait = min(o.MinBackoff<<c.failures, o.MaxBackoff)
		if c.failures >= maxDialFailures {
			delete(m.known, info.ID)
		}
	} else {
		c.failures = 0
	}
	c.next = time.Now().Add(wait)
	m.mu.Unlock()
	if err != nil {
		m.h.dialFailed(slog.LevelInfo, info, err, wait)
	}
	m.poke()
}

// ask asks a connected peer for peers and learns those it shares.
func (m *connManager) ask(ctx context.Context, id peer.ID) {
	askCtx, cancel := context.WithTimeout(ctx, m.h.opts.DialTimeout)
	peers, err := m.sharing.RequestPeers(askCtx, &Peer{ID: id, h: m.h}, 2*m.h.opts.TargetPeers)
	cancel()
	if ctx.Err() != nil {
		return
	}
	m.mu.Lock()
	m.asking--
	learned := m.learn(peers)
	m.mu.Unlock()
	if err != nil {
		m.h.log.Debug("peer sharing request failed", "peer", id, "err", err)
	} else {
		m.h.log.Debug("peers shared", "by", id, "peers", len(peers), "new", learned)
	}
	m.poke()
}

// learn adds the peers shared with the host, or updates their addresses,
// up to MaxKnownPeers, and returns how many it added. The topology's peers
// and the host itself are not learned: they are dialed as configured, or
// never. mu is held.
func (m *connManager) learn(peers []peer.AddrInfo) (added int) {
	for _, info := range peers {
		if info.ID == m.h.ID() || m.h.inTopology[info.ID] || len(info.Addrs) == 0 {
			continue
		}
		if c, ok := m.known[info.ID]; ok {
			c.addrs = info.Addrs
			continue
		}
		if len(m.known) < m.h.opts.MaxKnownPeers {
			m.known[info.ID] = &candidate{addrs: info.Addrs}
			added++
		}
	}
	return added
}

// livePeers are the connected peers whose clients run.
func (h *Host) livePeers() []peer.ID {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]peer.ID, 0, len(h.live))
	for id := range h.live {
		ids = append(ids, id)
	}
	return ids
}

// keptPeers counts the connected peers the connection manager keeps: the
// topology's, and those this host dialed. It returns the latter outside
// the topology, the ones it may prune, newest first.
func (h *Host) keptPeers() (kept int, prunable []peer.ID) {
	type since struct {
		id peer.ID
		at time.Time
	}
	h.mu.Lock()
	var dialed []since
	for id, lp := range h.live {
		switch {
		case h.inTopology[id]:
			kept++
		case outbound(h.host.Network(), id):
			kept++
			dialed = append(dialed, since{id, lp.since})
		}
	}
	h.mu.Unlock()
	slices.SortFunc(dialed, func(a, b since) int { return cmp.Or(b.at.Compare(a.at), cmp.Compare(a.id, b.id)) })
	for _, d := range dialed {
		prunable = append(prunable, d.id)
	}
	return kept, prunable
}
