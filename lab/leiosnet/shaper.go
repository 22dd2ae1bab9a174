package leiosnet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/protocol/identify"
)

// The link model. Mocknet's own links are not used for timing: its rate
// limiter banks up to a second of idle bandwidth (so the first bytes after
// a pause cross for free), and its latency holds each stream's next write
// until the previous one arrived (so a stream carries one write per
// latency). Instead every mocknet link runs with no latency and no limit,
// and each node's streams are wrapped so that what a node writes to a
// neighbour goes through that direction's wire:
//
//   - A wire is a FIFO serializer at the link rate that banks nothing: n
//     bytes queued at t finish serializing at max(t, wire free) + n/rate,
//     shared by every stream of that direction. A link is full duplex,
//     each direction at the full rate.
//   - Bytes arrive one latency after they finished serializing, in order
//     per stream; many frames are in flight at once, as on a real link.
//   - A write is cut into frames of at most frameBytes, and a writer waits
//     while the wire's queue holds more than sendBuffer bytes of
//     serialization time (a small socket buffer), so streams of one
//     direction interleave frame by frame.
//
// So a transfer costs latency plus serialization at the link rate, and
// nothing else: no TCP slow start, no loss, no header bytes.
const (
	frameBytes = 16 << 10
	sendBuffer = 64 << 10
)

// wire is one direction of a link.
type wire struct {
	rate    float64 // bytes per second
	latency time.Duration

	mu   sync.Mutex
	free time.Time // when what was queued so far has been serialized
}

// reserve queues n bytes on the wire at now and returns when they will
// have been serialized.
func (w *wire) reserve(now time.Time, n int) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.free.Before(now) {
		w.free = now // an idle wire banks nothing
	}
	w.free = w.free.Add(w.serialization(n))
	return w.free
}

func (w *wire) serialization(n int) time.Duration {
	return time.Duration(float64(n) / w.rate * float64(time.Second))
}

// shaper hands out the wires of one node, one per neighbour, and wraps
// the node's streams in them. Its delivery goroutines end with their
// stream, or when stop is closed.
type shaper struct {
	rate    float64
	latency time.Duration
	stop    <-chan struct{}

	mu    sync.Mutex
	wires map[peer.ID]*wire
}

func (s *shaper) wire(to peer.ID) *wire {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.wires[to]
	if w == nil {
		w = &wire{rate: s.rate, latency: s.latency}
		s.wires[to] = w
	}
	return w
}

// queueFrames is how many frames a stream may have on their way: enough
// for the wire's bandwidth-delay product twice over, so a lone stream can
// keep its wire busy.
func (s *shaper) queueFrames() int {
	bdp := s.rate * (s.latency.Seconds() + float64(sendBuffer)/s.rate)
	return 2*int(bdp)/frameBytes + 4
}

// shape wraps st: what this node writes on it goes through the wire to
// the stream's remote peer.
func (s *shaper) shape(st network.Stream) network.Stream {
	ss := &shapedStream{
		Stream:  st,
		wire:    s.wire(st.Conn().RemotePeer()),
		queue:   make(chan frame, s.queueFrames()),
		closing: make(chan struct{}),
		ended:   make(chan struct{}),
		done:    make(chan struct{}),
		stop:    s.stop,
	}
	go ss.deliver()
	return ss
}

// frame is bytes on their way, due at arrive.
type frame struct {
	data   []byte
	arrive time.Time
}

// errStreamEnded is a write after the stream was closed or reset here.
var errStreamEnded = errors.New("leiosnet: write on a closed stream")

// shapedStream is a stream whose writes cross the wire before they reach
// the underlying mocknet stream; reads are the underlying stream's.
type shapedStream struct {
	network.Stream
	wire    *wire
	queue   chan frame    // to deliver, never closed: a Write may race a Close
	closing chan struct{} // closed by CloseWrite or Close: deliver what is queued, then end
	ended   chan struct{} // closed by Reset: drop what is queued
	done    chan struct{} // closed when deliver returns
	stop    <-chan struct{}

	endOnce   sync.Once
	closeOnce sync.Once
	// sending is read-held by each enqueue and write-held by deliver while
	// it drains the queue after closing: a frame a Write counts as queued
	// is never sent after the last drain, so it arrives.
	sending sync.RWMutex
	mu      sync.Mutex // guards err
	err     error      // the underlying stream's write error
}

// Write queues p frame by frame on the wire; it returns once the last
// frame is queued (waiting while the wire's queue is full).
func (s *shapedStream) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), frameBytes)
		serialized := s.wire.reserve(time.Now(), n)
		if hold := time.Until(serialized) - s.wire.serialization(sendBuffer); hold > 0 {
			if !s.sleep(hold) {
				return written, s.writeErr()
			}
		}
		f := frame{data: append([]byte(nil), p[:n]...), arrive: serialized.Add(s.wire.latency)}
		if err := s.enqueue(f); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

func (s *shapedStream) enqueue(f frame) error {
	s.sending.RLock()
	defer s.sending.RUnlock()
	select {
	case <-s.closing:
		return errStreamEnded
	default:
	}
	select {
	case s.queue <- f:
		return nil
	case <-s.closing:
		return errStreamEnded
	case <-s.ended:
	case <-s.done:
	case <-s.stop:
	}
	return s.writeErr()
}

// sleep waits d, or until the stream ends; it reports whether it slept
// through.
func (s *shapedStream) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ended:
	case <-s.done:
	case <-s.stop:
	}
	return false
}

func (s *shapedStream) writeErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return errStreamEnded
}

// deliver writes each frame to the underlying stream when it arrives;
// once the stream is closing it delivers what is queued and closes the
// underlying stream's write side, so its end arrives after its last bytes.
func (s *shapedStream) deliver() {
	defer close(s.done)
	for {
		select {
		case f := <-s.queue:
			if !s.deliverFrame(f) {
				return
			}
		case <-s.closing:
			s.sending.Lock() // the enqueues under way see closing and end
			defer s.sending.Unlock()
			for {
				select {
				case f := <-s.queue:
					if !s.deliverFrame(f) {
						return
					}
				default:
					_ = s.Stream.CloseWrite()
					return
				}
			}
		case <-s.ended:
			return
		case <-s.stop:
			return
		}
	}
}

// deliverFrame waits for f's arrival and writes it; it reports whether
// the stream goes on.
func (s *shapedStream) deliverFrame(f frame) bool {
	if wait := time.Until(f.arrive); wait > 0 && !s.sleep(wait) {
		return false
	}
	if _, err := s.Stream.Write(f.data); err != nil {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		return false
	}
	return true
}

// closeWrite ends the write side once what is queued has arrived.
func (s *shapedStream) closeWrite() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// CloseWrite ends the write side after the queued bytes; it does not wait
// for them to arrive, as a real stream's close does not.
func (s *shapedStream) CloseWrite() error {
	s.closeWrite()
	return nil
}

// Close stops reading now and ends the write side after the queued bytes.
func (s *shapedStream) Close() error {
	err := s.Stream.CloseRead()
	s.closeWrite()
	return err
}

// Reset drops what is queued and resets the underlying stream.
func (s *shapedStream) Reset() error {
	s.endOnce.Do(func() { close(s.ended) })
	return s.Stream.Reset()
}

// ResetWithError drops what is queued and resets the underlying stream.
func (s *shapedStream) ResetWithError(code network.StreamErrorCode) error {
	s.endOnce.Do(func() { close(s.ended) })
	return s.Stream.ResetWithError(code)
}

// shapedHost is a mocknet host whose streams, opened or accepted, go
// through the shaper's wires.
type shapedHost struct {
	host.Host
	shaper *shaper
}

// IDService is the mocknet host's identify, which the wrapper would hide:
// the network's clients wait for a peer's identify to choose a protocol
// version (network.Peer.Speaks) as a node's do, instead of probing with a
// stream the peer counts against its stream limit.
func (h *shapedHost) IDService() identify.IDService {
	return h.Host.(interface{ IDService() identify.IDService }).IDService()
}

func newShapedHost(h host.Host, rate float64, latency time.Duration, stop <-chan struct{}) *shapedHost {
	return &shapedHost{Host: h, shaper: &shaper{rate: rate, latency: latency, stop: stop, wires: map[peer.ID]*wire{}}}
}

func (h *shapedHost) NewStream(ctx context.Context, p peer.ID, pids ...protocol.ID) (network.Stream, error) {
	st, err := h.Host.NewStream(ctx, p, pids...)
	if err != nil {
		return nil, err
	}
	return h.shaper.shape(st), nil
}

func (h *shapedHost) SetStreamHandler(pid protocol.ID, handler network.StreamHandler) {
	h.Host.SetStreamHandler(pid, func(st network.Stream) { handler(h.shaper.shape(st)) })
}

func (h *shapedHost) SetStreamHandlerMatch(pid protocol.ID, match func(protocol.ID) bool, handler network.StreamHandler) {
	h.Host.SetStreamHandlerMatch(pid, match, func(st network.Stream) { handler(h.shaper.shape(st)) })
}
