package network

import (
	"crypto/ed25519"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// HostOptions configure a Host. Zero values take the documented defaults.
type HostOptions struct {
	// Key is the node's ed25519 key; the peer ID derives from it. Required.
	Key ed25519.PrivateKey
	// Libp2p, if set, is an already built libp2p host to run on instead of
	// one built from Key and ListenAddrs — for tests and benchmarks of many
	// nodes on mocknet links with latency and bandwidth. Its connection
	// gater is its own: bans then disconnect but cannot refuse redials.
	Libp2p host.Host
	// ListenAddrs are multiaddrs to listen on, e.g. /ip4/127.0.0.1/tcp/3001.
	// None: the host only dials.
	ListenAddrs []string
	// AgentVersion is the agent this host announces to its peers through
	// libp2p identify (they keep it in their peerstores as
	// "AgentVersion"), e.g. "leiosnode/v0.4.0". Default libp2p's, the
	// main module's path@version. A ready-made Libp2p host keeps its own.
	AgentVersion string
	// Topology lists the peers to keep connected to, as multiaddrs ending in
	// /p2p/<peer ID>. Each is redialed with backoff while disconnected.
	Topology []string

	// Services are the mini-protocol applications run with every peer.
	Services []Service

	// PeerSharing, if set, is the peer-sharing protocol
	// (network/peersharing): the host serves it, and its connection
	// manager (connmgr.go) asks peers for more while it keeps fewer than
	// TargetPeers. Nil: the host takes no part in peer sharing. It keeps to
	// its topology and whoever dials it, and, since identify then does not
	// list the protocol for it, its peers do not share it with others.
	PeerSharing PeerSharing
	// TargetPeers is how many peers the connection manager keeps: the
	// topology's, which it always dials and never prunes (even beyond the
	// target), and those it dialed at addresses peers shared. Peers that
	// dialed this host do not count (MaxUnknownPeers bounds them). Only
	// with PeerSharing. Default 8.
	TargetPeers int
	// PeerSharingInterval is how often the connection manager looks at its
	// peers when nothing happens; it also looks when a peer connects, is
	// identified, or a dial or request ends. Default 5 s.
	PeerSharingInterval time.Duration
	// ShareRequestInterval is how long the connection manager waits before
	// it asks the same peer for peers again. Default 30 s.
	ShareRequestInterval time.Duration
	// MaxKnownPeers bounds the peers learned by peer sharing that the
	// connection manager keeps to dial. Default 1000.
	MaxKnownPeers int

	// MaxViolations within ViolationWindow get a peer disconnected and
	// gated for BanDuration. Defaults 3, 10 minutes, 10 minutes.
	MaxViolations   int
	ViolationWindow time.Duration
	BanDuration     time.Duration

	// MinBackoff and MaxBackoff bound the exponential backoff between dials
	// of a topology peer, and between restarts of a client that failed.
	// Defaults 500 ms and 30 s.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// DialTimeout bounds one dial. Default 10 s.
	DialTimeout time.Duration

	// Limits on what peers may hold (limits.go). A limit reached refuses
	// the connection or stream, counted by limit; topology peers get in
	// even when MaxConns is reached. Libp2p hosts given ready-made keep
	// their own resource manager and gater; MaxStreams still applies.
	//
	// MaxConns bounds all connections. Default 256.
	MaxConns int
	// MaxConnsPerPeer bounds one peer's connections: one, another when
	// both dial at once, and a new one while a dead one is still being
	// detected. Default 4.
	MaxConnsPerPeer int
	// MaxStreamsPerPeer bounds one peer's inbound streams of all
	// protocols, libp2p's own included; each mini-protocol also bounds
	// its own (Server.MaxStreams). Default 64.
	MaxStreamsPerPeer int
	// MaxUnknownPeers bounds the peers outside the topology connected by
	// their own dial only (inbound peers): the peers the connection manager
	// dials do not count against it. Default 32.
	MaxUnknownPeers int

	// FrameTimeout and FrameRate bound the arrival of one frame of any
	// mini-protocol once it has begun (protocol.Config). Defaults
	// protocol.DefaultFrameTimeout and protocol.DefaultFrameRate.
	FrameTimeout time.Duration
	FrameRate    int
	// ServeBytesPerPeer and ServeBytesTotal bound the bytes a second the
	// host's servers send to one peer, and to all (servebudget.go), with
	// a second's worth as a burst. Defaults 32 MiB and 128 MiB: far above
	// what a closure's diffusion needs of one peer, well below what a
	// peer that pulls the chain on every stream it may open would take.
	ServeBytesPerPeer int
	ServeBytesTotal   int
	// ServeBytesHeld bounds the bytes the servers hold for the answers they
	// are reading and writing, all peers together (servebudget.go): a
	// LeiosFetch answer holds its EB's body and a chunk of its txs, not
	// its closure. Default 96 MiB: above what the peers outside the
	// topology can hold with streams they do not read (32 peers × 4
	// LeiosFetch streams × (a 512 KiB body + a 128 KiB chunk + a 16 KiB
	// tx) = 82 MiB), so they cannot hold back the node's answers to others.
	ServeBytesHeld int
	// WastePerSecond and WasteBurst are each peer's budget of useless
	// messages (Peer.Waste): a request for data not held costs a protocol
	// more than a stale notification. Defaults 100 and 10,000: a
	// catch-up from a peer far behind fits in the burst; a flood is a
	// violation within a fraction of a second, and a ban within three.
	WastePerSecond int
	WasteBurst     int

	// OnMessage, if set, sees every mini-protocol message sent to or
	// received from a peer, with its size (for traces). It runs on the
	// session's goroutine and must not block.
	OnMessage func(id peer.ID, dir protocol.Direction, m protocol.Message, size int)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer, if set, receives the host's Prometheus metrics.
	Registerer prometheus.Registerer
}

// The serve budget's defaults (HostOptions.ServeBytesPerPeer,
// ServeBytesTotal, ServeBytesHeld), which the node runs with.
const (
	DefaultServeBytesPerPeer = 32 << 20
	DefaultServeBytesTotal   = 128 << 20
	DefaultServeBytesHeld    = 96 << 20
)

func (o *HostOptions) setDefaults() {
	if o.MaxViolations <= 0 {
		o.MaxViolations = 3
	}
	if o.ViolationWindow <= 0 {
		o.ViolationWindow = 10 * time.Minute
	}
	if o.BanDuration <= 0 {
		o.BanDuration = 10 * time.Minute
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 256
	}
	if o.MaxConnsPerPeer <= 0 {
		o.MaxConnsPerPeer = 4
	}
	if o.MaxStreamsPerPeer <= 0 {
		o.MaxStreamsPerPeer = 64
	}
	if o.ServeBytesPerPeer <= 0 {
		o.ServeBytesPerPeer = DefaultServeBytesPerPeer
	}
	if o.ServeBytesTotal <= 0 {
		o.ServeBytesTotal = DefaultServeBytesTotal
	}
	if o.ServeBytesHeld <= 0 {
		o.ServeBytesHeld = DefaultServeBytesHeld
	}
	if o.WastePerSecond <= 0 {
		o.WastePerSecond = 100
	}
	if o.WasteBurst <= 0 {
		o.WasteBurst = 10_000
	}
	if o.MaxUnknownPeers <= 0 {
		o.MaxUnknownPeers = 32
	}
	if o.TargetPeers <= 0 {
		o.TargetPeers = 8
	}
	if o.PeerSharingInterval <= 0 {
		o.PeerSharingInterval = 5 * time.Second
	}
	if o.ShareRequestInterval <= 0 {
		o.ShareRequestInterval = 30 * time.Second
	}
	if o.MaxKnownPeers <= 0 {
		o.MaxKnownPeers = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}
