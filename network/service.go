package network

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/protocol/identify"
	"github.com/multiformats/go-multistream"

	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/internal/pause"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Service is one mini-protocol application the host runs with every peer:
// the protocols it answers on the streams peers open, and a client it runs
// toward each connected peer. Every protocol package (chainsync,
// blockfetch, txsubmission, notify, fetch) implements it in its own
// service.go; the host sees nothing else of them.
type Service interface {
	// Name names the service in logs and errors.
	Name() string
	// Servers are the protocols the service answers; the host calls it once,
	// in NewHost.
	Servers() []Server
	// RunClient runs the client toward p while p stays connected; ctx ends
	// when p disconnects or the host stops. When it returns earlier it is
	// restarted after a backoff. It reports violations through
	// Session.Fail. A service without a client returns ErrNoClient at once,
	// and the host does not restart it.
	RunClient(ctx context.Context, p *Peer) error
}

// ErrNoClient is what RunClient returns for a service that only serves.
var ErrNoClient = errors.New("network: service has no client")

// PeerSharing is the peer-sharing mini-protocol as the host needs it
// (network/peersharing implements it; HostOptions.PeerSharing): a Service
// whose server shares the peers the host shares (Peer.PeersToShare), and a
// way for the connection manager to ask one peer for more.
type PeerSharing interface {
	Service
	// RequestPeers asks p for the addresses of up to amount peers.
	RequestPeers(ctx context.Context, p *Peer, amount int) ([]peer.AddrInfo, error)
}

// Server answers one mini-protocol on the streams peers open.
type Server struct {
	Spec *protocol.Spec
	// Serve answers one session; ctx ends with it, and names the peer at
	// the other end (RemotePeer). An error it returns ends the session (and
	// counts against the peer if it is a violation).
	Serve func(ctx context.Context, s *protocol.Session) error
	// MaxStreams bounds the streams of this protocol one peer may have
	// open; a peer that opens more is disconnected (limits.go). Default
	// DefaultMaxStreams.
	MaxStreams int
}

// Peer is a connected peer, as a Service's client sees it.
type Peer struct {
	ID peer.ID
	h  *Host

	mu       sync.Mutex          // guards sessions
	sessions []*protocol.Session // open ones, and those ended since the last Open
}

// Open opens a stream of spec to the peer and starts a client session on
// it. The session is closed when the client returns, if not before.
func (p *Peer) Open(ctx context.Context, spec *protocol.Spec) (*protocol.Session, error) {
	st, err := p.h.host.NewStream(ctx, p.ID, libp2pprotocol.ID(spec.ID()))
	if err != nil {
		return nil, fmt.Errorf("network: open %s to %s: %w", spec.Label(), p.ID, err)
	}
	s := p.h.newSession(ctx, spec, protocol.Client, p.ID, st, nil)
	p.mu.Lock()
	// Streams opened per request (block fetch's) end all the time: drop
	// the ended ones, so the list holds the live ones.
	p.sessions = slices.DeleteFunc(p.sessions, func(s *protocol.Session) bool { return s.Context().Err() != nil })
	p.sessions = append(p.sessions, s)
	p.mu.Unlock()
	return s, nil
}

// Speaks returns the first of specs the peer serves: how a service with
// several versions of its protocols chooses per peer. It reads the
// protocol list the peer's identify sent (waited for on each of its
// connections), and if that names none of specs — identify not heard, or
// a host that does not run it — negotiates a stream in specs' order and
// resets it. It fails with ErrNoCommonProtocol if the peer serves none.
func (p *Peer) Speaks(ctx context.Context, specs ...*protocol.Spec) (*protocol.Spec, error) {
	ids := make([]libp2pprotocol.ID, len(specs))
	for i, spec := range specs {
		ids[i] = libp2pprotocol.ID(spec.ID())
	}
	if idService, ok := p.h.host.(interface{ IDService() identify.IDService }); ok {
		// Bounded: a connection identify never gets to (a host that runs
		// no identify, a loaded machine) must not hold the client for
		// ever; negotiating below answers as well.
		wait := time.NewTimer(identifyWait)
		defer wait.Stop()
	conns:
		for _, c := range p.h.host.Network().ConnsToPeer(p.ID) {
			select {
			case <-idService.IDService().IdentifyWait(c):
			case <-wait.C:
				break conns
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	if listed, err := p.h.host.Peerstore().SupportsProtocols(p.ID, ids...); err == nil && len(listed) > 0 {
		return specs[slices.Index(ids, listed[0])], nil
	}
	st, err := p.h.host.NewStream(ctx, p.ID, ids...)
	if _, none := errors.AsType[multistream.ErrNotSupported[libp2pprotocol.ID]](err); none {
		return nil, fmt.Errorf("%w: %s serves none of %v", ErrNoCommonProtocol, p.ID, ids)
	} else if err != nil {
		return nil, fmt.Errorf("network: negotiating %v with %s: %w", ids, p.ID, err)
	}
	_ = st.Reset()
	i := slices.Index(ids, st.Protocol())
	if i < 0 {
		return nil, fmt.Errorf("network: %s negotiated %s, not one of %v", p.ID, st.Protocol(), ids)
	}
	return specs[i], nil
}

// identifyWait bounds how long Speaks waits for a peer's identify.
const identifyWait = 5 * time.Second

// ErrNoCommonProtocol: the peer serves none of the versions a client
// speaks (Peer.Speaks).
var ErrNoCommonProtocol = errors.New("network: no protocol in common")

// PeersToShare are up to amount peers the host shares with p, by peer
// sharing (share.go).
func (p *Peer) PeersToShare(amount int) []peer.AddrInfo { return p.h.peersToShare(p.ID, amount) }

// remotePeerKey keys the remote peer in a served session's context.
type remotePeerKey struct{}

// RemotePeer is the peer at the other end of the session a Server.Serve
// answers, from the ctx Serve was given; nil for any other ctx.
func RemotePeer(ctx context.Context) *Peer {
	p, _ := ctx.Value(remotePeerKey{}).(*Peer)
	return p
}

func (p *Peer) closeSessions() {
	p.mu.Lock()
	sessions := p.sessions
	p.sessions = nil
	p.mu.Unlock()
	for _, s := range sessions {
		s.Close()
	}
}

// newSession starts a session whose violations count against id; pace,
// if set, paces its sends, and a served session holds its answers' bytes
// within the serve budget's bound.
func (h *Host) newSession(ctx context.Context, spec *protocol.Spec, role protocol.Agency, id peer.ID, st protocol.Stream, pace func(context.Context, int) error) *protocol.Session {
	var hold func(context.Context, int) (func(), error)
	if role == protocol.Server {
		hold = h.budget.hold
	}
	return protocol.NewSession(ctx, protocol.Config{
		Spec:         spec,
		Role:         role,
		Stream:       st,
		FrameTimeout: h.opts.FrameTimeout,
		FrameRate:    h.opts.FrameRate,
		Pace:         pace,
		Hold:         hold,
		OnViolation: func(err error) {
			h.violation(id, spec.Label(), err)
		},
		OnMessage: func(dir protocol.Direction, m protocol.Message, size int) {
			label := directionLabel(dir)
			h.metrics.messages.WithLabelValues(spec.Label(), label).Inc()
			h.metrics.bytes.WithLabelValues(spec.Label(), label).Add(float64(size))
			if h.opts.OnMessage != nil {
				h.opts.OnMessage(id, dir, m, size)
			}
		},
	})
}

// workOf is the kind of work svc's client does: that of its protocol
// (protocol.Spec.Work), which its servers declare.
func workOf(svc Service) cpuwork.Kind {
	if servers := svc.Servers(); len(servers) > 0 {
		return cmp.Or(servers[0].Spec.Work, cpuwork.Network)
	}
	return cpuwork.Network
}

// runClient runs svc's client toward one peer until ctx ends, restarting it
// with backoff when it returns. Its goroutine is labelled with the
// service's kind of work, and so is every goroutine the client starts.
func (h *Host) runClient(ctx context.Context, id peer.ID, svc Service) {
	cpuwork.Do(ctx, workOf(svc), func(ctx context.Context) { h.clientLoop(ctx, id, svc) })
}

func (h *Host) clientLoop(ctx context.Context, id peer.ID, svc Service) {
	backoff := h.opts.MinBackoff
	for ctx.Err() == nil {
		p := &Peer{ID: id, h: h}
		start := time.Now()
		err := svc.RunClient(ctx, p)
		p.closeSessions()
		if ctx.Err() != nil || errors.Is(err, ErrNoClient) {
			return
		}
		h.log.Debug("client ended", "service", svc.Name(), "peer", id, "err", err)
		if time.Since(start) > h.opts.MaxBackoff {
			backoff = h.opts.MinBackoff
		}
		if !pause.For(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, h.opts.MaxBackoff)
	}
}

// handler serves srv on the streams peers open. Handlers run on libp2p's
// goroutines; Run waits for them before it returns.
func (h *Host) handler(srv Server) network.StreamHandler {
	return func(st network.Stream) {
		ctx, ok := h.enterHandler()
		if !ok {
			_ = st.Reset()
			return
		}
		defer h.handlers.Done()
		id := st.Conn().RemotePeer()
		limit := cmp.Or(srv.MaxStreams, DefaultMaxStreams)
		release, ok := h.streams.acquire(id, srv.Spec.Label(), limit)
		if !ok {
			_ = st.Reset()
			h.overLimit(id, limitProtocolStream, fmt.Sprintf("more than %d %s streams", limit, srv.Spec.Label()))
			return
		}
		defer release()
		pace, unbudget := h.budget.acquire(id, srv.Spec.Label())
		defer unbudget()
		ctx = context.WithValue(ctx, remotePeerKey{}, &Peer{ID: id, h: h})
		// Labelled before the session starts its reader, which inherits the
		// label with the goroutine.
		cpuwork.Do(ctx, cmp.Or(srv.Spec.Work, cpuwork.Network), func(ctx context.Context) {
			s := h.newSession(ctx, srv.Spec, protocol.Server, id, st, pace)
			defer s.Close()
			if err := srv.Serve(s.Context(), s); err != nil {
				s.Fail(err) // a violation Serve found is counted; others just end it
				h.log.Debug("server ended", "protocol", srv.Spec.Label(), "peer", id, "err", err)
			}
		})
	}
}
