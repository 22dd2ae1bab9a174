package network

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/internal/logging"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Host is the node's libp2p host with its topology, services and peer
// scoring. Build it with NewHost, then Run it once.
type Host struct {
	opts       HostOptions
	host       host.Host
	log        *slog.Logger
	lines      *logging.Limiter // a peer's repeated warnings
	scorer     *scorer
	streams    *streamCount // per peer and protocol, as served
	budget     *serveBudget // bytes served a second, per peer and in total; bytes held for answers
	metrics    *metrics
	topology   []peer.AddrInfo
	inTopology map[peer.ID]bool
	services   []Service
	servers    []Server     // every service's, collected once
	conns      *connManager // nil without peer sharing
	// sharingProtocols are the peer-sharing protocol's IDs (none without
	// PeerSharing): a peer identify lists them for takes part in it.
	sharingProtocols []libp2pprotocol.ID

	// mu guards the run state below. It is taken in libp2p's connection
	// callbacks, so it is never held while waiting on anything.
	mu       sync.Mutex
	runCtx   context.Context // nil until Run
	group    *errgroup.Group
	stopping bool // Run is returning: no new clients or handlers
	live     map[peer.ID]*livePeer
	// closing says why the host closed a connected peer, for the line
	// that logs its disconnection.
	closing map[peer.ID]string
	// listenAddrs are the addresses each connected peer announced it
	// listens on (identify), for peer sharing.
	listenAddrs map[peer.ID][]ma.Multiaddr
	handlers    sync.WaitGroup // stream handlers running; Add only under mu, before stopping
}

// livePeer is a connected peer whose service clients run.
type livePeer struct {
	cancel context.CancelFunc // stops its clients
	gone   chan struct{}      // closed when it disconnects
	since  time.Time          // when it connected
	waste  *WasteBudget       // its useless messages (Peer.Waste)
}

// PeerInfo describes a connected peer, for the status API.
type PeerInfo struct {
	ID peer.ID
	// Addr is the remote address of its first connection, Direction who
	// dialed that connection: DirectionInbound or DirectionOutbound.
	Addr      string
	Direction string
	// Since is when it connected.
	Since time.Time
	// Leios are the Leios mini-protocols (/leios/…) both this node and the
	// peer serve, as identify told: the versions they can speak, sorted.
	Leios []string
}

// PeerInfo.Direction's values.
const (
	DirectionInbound  = "inbound"  // the peer dialed
	DirectionOutbound = "outbound" // this host dialed
)

func directionName(d network.Direction) string {
	if d == network.DirOutbound {
		return DirectionOutbound
	}
	return DirectionInbound
}

// NewHost builds the host and starts listening. Nothing is dialed or
// served until Run.
func NewHost(opts HostOptions) (*Host, error) {
	opts.setDefaults()
	if opts.Libp2p == nil && len(opts.Key) != ed25519.PrivateKeySize {
		return nil, errors.New("network: HostOptions.Key must be an ed25519 private key")
	}
	h := &Host{
		opts:        opts,
		log:         opts.Logger,
		lines:       logging.NewLimiter(0, 0),
		live:        make(map[peer.ID]*livePeer),
		closing:     make(map[peer.ID]string),
		listenAddrs: make(map[peer.ID][]ma.Multiaddr),
		inTopology:  make(map[peer.ID]bool),
	}
	for _, s := range opts.Topology {
		info, err := peer.AddrInfoFromString(s)
		if err != nil {
			return nil, fmt.Errorf("network: topology peer %q: %w", s, err)
		}
		h.topology = append(h.topology, *info)
		h.inTopology[info.ID] = true
	}
	h.services = opts.Services
	if opts.PeerSharing != nil {
		h.services = append(slices.Clip(h.services), opts.PeerSharing)
		for _, srv := range opts.PeerSharing.Servers() {
			h.sharingProtocols = append(h.sharingProtocols, libp2pprotocol.ID(srv.Spec.ID()))
		}
	}
	if err := h.collectServers(); err != nil {
		return nil, err
	}
	h.metrics = newMetrics()
	h.budget = newServeBudget(h.opts.ServeBytesPerPeer, h.opts.ServeBytesTotal, h.opts.ServeBytesHeld, h.metrics)
	h.scorer = newScorer(opts.MaxViolations, opts.ViolationWindow, opts.BanDuration)
	h.streams = &streamCount{open: make(map[peerProtocol]int)}
	if opts.PeerSharing != nil {
		h.conns = newConnManager(h, opts.PeerSharing)
	}
	if opts.Libp2p != nil {
		h.host = opts.Libp2p
	} else if err := h.buildLibp2p(); err != nil {
		return nil, err
	}
	// The protocols are served from before the host listens: a peer that
	// connects before Run must see them in identify and in negotiation,
	// or its clients take this host for one that speaks none and give up
	// on it for good (ErrNoClient). Until Run, a stream is reset, which a
	// client retries.
	for _, srv := range h.servers {
		h.host.SetStreamHandler(libp2pprotocol.ID(srv.Spec.ID()), h.handler(srv))
	}
	if opts.Libp2p == nil {
		if err := h.listen(); err != nil {
			_ = h.host.Close()
			return nil, err
		}
	}
	if opts.Registerer != nil {
		if err := h.metrics.register(opts.Registerer, func() int { return len(h.host.Network().Peers()) }); err != nil {
			_ = h.host.Close()
			return nil, fmt.Errorf("network: metrics: %w", err)
		}
	}
	return h, nil
}

// buildLibp2p builds the libp2p host: TCP, Noise, Yamux, the gater and the
// resource manager of the host's limits. NewHost listens.
func (h *Host) buildLibp2p() error {
	key, err := crypto.UnmarshalEd25519PrivateKey(h.opts.Key)
	if err != nil {
		return fmt.Errorf("network: host key: %w", err)
	}
	limits, err := h.resourceManager()
	if err != nil {
		return err
	}
	gater := newGater(h.scorer, h.inTopology, h.opts.MaxUnknownPeers, h.metrics)
	options := []libp2p.Option{
		libp2p.Identity(key),
		// NewHost listens once the host is built and serves its protocols:
		// a host that fails to start leaves goroutines behind, one that is
		// closed does not.
		libp2p.NoListenAddrs,
		// Without SO_REUSEPORT, a port another process (or node) listens on
		// is an error rather than a listener that shares it.
		libp2p.Transport(tcp.NewTCPTransport, tcp.DisableReuseport()),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ConnectionGater(gater),
		libp2p.ResourceManager(limits),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(), // ours go to opts.Registerer
		// libp2p's dependency injection logs a failed start three times at
		// error level, beside the error New returns.
		libp2p.WithFxOption(fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger })),
	}
	if h.opts.AgentVersion != "" {
		options = append(options, libp2p.UserAgent(h.opts.AgentVersion))
	}
	h.host, err = libp2p.New(options...)
	if err != nil {
		limits.Close()
		return fmt.Errorf("network: libp2p host: %w", err)
	}
	net := h.host.Network()
	gater.net.Store(&net)
	return nil // NewHost listens, once the protocols are served
}

// listen listens on each of ListenAddrs, one at a time: libp2p would
// succeed if any one of them did.
func (h *Host) listen() error {
	for _, s := range h.opts.ListenAddrs {
		addr, err := ma.NewMultiaddr(s)
		if err != nil {
			return fmt.Errorf("network: listen address %q: %w", s, err)
		}
		if err := h.host.Network().Listen(addr); err != nil {
			return fmt.Errorf("network: listen on %s: %w", addr, err)
		}
	}
	return nil
}

// collectServers gathers the services' servers, validating every Spec and
// rejecting a protocol served twice.
func (h *Host) collectServers() error {
	seen := make(map[string]bool)
	for _, svc := range h.services {
		for _, srv := range svc.Servers() {
			if err := srv.Spec.Validate(); err != nil {
				return fmt.Errorf("network: service %s: %w", svc.Name(), err)
			}
			if seen[srv.Spec.ID()] {
				return fmt.Errorf("network: protocol %s served twice", srv.Spec.ID())
			}
			seen[srv.Spec.ID()] = true
			h.servers = append(h.servers, srv)
		}
	}
	return nil
}

// ID is the host's peer ID.
func (h *Host) ID() peer.ID { return h.host.ID() }

// P2PAddrs are the host's listen addresses with its peer ID, as other
// nodes' topologies name it.
func (h *Host) P2PAddrs() []string {
	addrs, err := peer.AddrInfoToP2pAddrs(&peer.AddrInfo{ID: h.host.ID(), Addrs: h.host.Addrs()})
	if err != nil {
		return nil
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

// Peers lists the connected peers, sorted by ID.
func (h *Host) Peers() []PeerInfo {
	h.mu.Lock()
	since := make(map[peer.ID]time.Time, len(h.live))
	for id, lp := range h.live {
		since[id] = lp.since
	}
	h.mu.Unlock()
	net := h.host.Network()
	var infos []PeerInfo
	for _, id := range net.Peers() {
		conns := net.ConnsToPeer(id)
		if len(conns) == 0 {
			continue // gone since Peers
		}
		c := conns[0]
		info := PeerInfo{ID: id, Addr: c.RemoteMultiaddr().String(), Direction: directionName(c.Stat().Direction), Since: since[id]}
		if info.Since.IsZero() { // not running yet
			info.Since = c.Stat().Opened
		}
		info.Leios = h.sharedLeios(id)
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b PeerInfo) int { return cmp.Compare(a.ID, b.ID) })
	return infos
}

// sharedLeios are the Leios protocols this host serves that id serves too.
func (h *Host) sharedLeios(id peer.ID) []string {
	var ours []libp2pprotocol.ID
	for _, srv := range h.servers {
		if spec := srv.Spec.ID(); strings.HasPrefix(spec, "/leios/") {
			ours = append(ours, libp2pprotocol.ID(spec))
		}
	}
	both, err := h.host.Peerstore().SupportsProtocols(id, ours...)
	if err != nil {
		return nil
	}
	shared := make([]string, len(both))
	for i, p := range both {
		shared[i] = string(p)
	}
	slices.Sort(shared)
	return shared
}

// Run serves the services' protocols, keeps the topology connected (and,
// with peer sharing, TargetPeers) and runs the service clients toward every
// connected peer, until ctx ends. It then stops every goroutine it started,
// closes the host and returns nil.
func (h *Host) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	h.mu.Lock()
	if h.runCtx != nil {
		h.mu.Unlock()
		return errors.New("network: Host.Run called twice")
	}
	h.runCtx, h.group = ctx, g
	h.mu.Unlock()

	identified, err := h.host.EventBus().Subscribe(new(event.EvtPeerIdentificationCompleted))
	if err != nil {
		return errors.Join(fmt.Errorf("network: identify events: %w", err), h.host.Close())
	}
	defer identified.Close()
	notifiee := &network.NotifyBundle{
		ConnectedF:    func(_ network.Network, c network.Conn) { h.reconcile(c) },
		DisconnectedF: func(_ network.Network, c network.Conn) { h.reconcile(c) },
	}
	h.host.Network().Notify(notifiee)
	for _, id := range h.host.Network().Peers() {
		if conns := h.host.Network().ConnsToPeer(id); len(conns) > 0 {
			h.reconcile(conns[0])
		}
	}
	g.Go(func() error { h.watchIdentify(ctx, identified); return nil })
	for _, info := range h.topology {
		if info.ID != h.host.ID() {
			g.Go(func() error { h.keepConnected(ctx, info); return nil })
		}
	}
	if h.conns != nil {
		g.Go(func() error { h.conns.run(ctx); return nil })
	}

	<-ctx.Done()
	h.mu.Lock()
	h.stopping = true
	h.mu.Unlock()
	err = g.Wait()
	h.host.Network().StopNotify(notifiee)
	for _, srv := range h.servers {
		h.host.RemoveStreamHandler(libp2pprotocol.ID(srv.Spec.ID()))
	}
	h.handlers.Wait()
	return errors.Join(err, h.host.Close())
}

// Close closes a host that was never run; Run closes its host itself.
func (h *Host) Close() error { return h.host.Close() }

// reconcile starts or stops the service clients of c's peer to match
// whether it is connected, and logs the change. It runs in libp2p's
// connection callbacks, for every connection change, and asks for the
// connectedness under mu, so the last callback always leaves the truth.
func (h *Host) reconcile(c network.Conn) {
	id := c.RemotePeer()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.runCtx == nil || h.stopping {
		return
	}
	connected := h.host.Network().Connectedness(id) == network.Connected
	lp, running := h.live[id]
	switch {
	case connected && !running:
		ctx, cancel := context.WithCancel(h.runCtx)
		h.live[id] = &livePeer{cancel: cancel, gone: make(chan struct{}), since: time.Now(),
			waste: NewWasteBudget(h.opts.WastePerSecond, h.opts.WasteBurst)}
		delete(h.closing, id)
		for _, svc := range h.services {
			h.group.Go(func() error { h.runClient(ctx, id, svc); return nil })
		}
		h.log.Info("peer connected", "peer", id, "addr", c.RemoteMultiaddr(),
			"direction", directionName(c.Stat().Direction), "topology", h.inTopology[id])
		h.conns.poke()
	case !connected && running:
		lp.cancel()
		close(lp.gone)
		delete(h.live, id)
		delete(h.listenAddrs, id)
		reason, ok := h.closing[id]
		if !ok {
			reason = "closed by the peer or lost"
		}
		delete(h.closing, id)
		h.log.Info("peer disconnected", "peer", id, "addr", c.RemoteMultiaddr(), "reason", reason,
			"after", time.Since(lp.since).Round(time.Second), "topology", h.inTopology[id])
		h.conns.poke()
	}
}

// closePeer closes every connection of id, saying why in the line that
// logs its disconnection.
func (h *Host) closePeer(id peer.ID, reason string) {
	h.mu.Lock()
	if _, ok := h.live[id]; ok {
		h.closing[id] = reason
	}
	h.mu.Unlock()
	_ = h.host.Network().ClosePeer(id)
}

// connectedPeer returns a channel closed when id disconnects, if id is
// connected.
func (h *Host) connectedPeer(id peer.ID) (gone <-chan struct{}, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	lp, ok := h.live[id]
	if !ok {
		return nil, false
	}
	return lp.gone, true
}

// enterHandler admits a stream handler unless the host is stopping; it
// returns the context sessions run under.
func (h *Host) enterHandler() (context.Context, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.runCtx == nil || h.stopping {
		return nil, false
	}
	h.handlers.Add(1)
	return h.runCtx, true
}

// Disconnect bans id at once (for BanDuration) and closes its connections:
// for offences a protocol judges bad enough without a repeat, such as a
// third header for one slot and issuer.
func (h *Host) Disconnect(id peer.ID, reason string) {
	h.scorer.ban(id)
	h.metrics.bans.Inc()
	h.log.Warn("peer disconnected and banned", "peer", id, "reason", reason, "for", h.opts.BanDuration)
	h.closePeer(id, "banned: "+reason)
}

// violation counts a violation against id, and disconnects a repeat
// offender, whom the gater then refuses until its ban expires.
func (h *Host) violation(id peer.ID, protocolName string, err error) {
	kind := violationKind(err)
	h.metrics.violations.WithLabelValues(protocolName, kind).Inc()
	h.lines.Log(context.Background(), h.log, slog.LevelWarn, string(id), "protocol violation", "peer", id, "protocol", protocolName, "kind", kind, "err", err)
	if errors.Is(err, protocol.ErrDisconnect) {
		h.Disconnect(id, err.Error())
		return
	}
	if h.scorer.violation(id) {
		h.metrics.bans.Inc()
		h.log.Warn("peer banned", "peer", id, "for", h.opts.BanDuration)
		h.closePeer(id, "banned after repeated violations")
	}
}

// ProbeListenAddrs binds each TCP address of addrs and lets it go again: a
// node checks its addresses this way before it creates its databases, so
// an address another program holds is refused with nothing written. The
// host binds them for good later; a program that takes one in between is
// still reported then.
func ProbeListenAddrs(addrs []string) error {
	for _, s := range addrs {
		addr, err := ma.NewMultiaddr(s)
		if err != nil {
			return fmt.Errorf("network: listen address %q: %w", s, err)
		}
		if _, err := addr.ValueForProtocol(ma.P_TCP); err != nil {
			continue // not TCP: only the host's transport can tell
		}
		l, err := manet.Listen(addr)
		if err != nil {
			return fmt.Errorf("network: listen on %s: %w", addr, err)
		}
		if err := l.Close(); err != nil {
			return fmt.Errorf("network: listen on %s: %w", addr, err)
		}
	}
	return nil
}
