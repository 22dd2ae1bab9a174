package protocol

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"time"
)

// Stream is the transport of one session: a libp2p stream, or any
// bidirectional byte stream in tests.
type Stream interface {
	io.Reader
	io.Writer
	Close() error // graceful: what was written is delivered
	Reset() error // abortive: both directions are dropped at once
}

// Direction tells Config.OnMessage whether a message was sent or received.
type Direction uint8

const (
	Received Direction = iota + 1
	Sent
)

// Config configures a Session.
type Config struct {
	Spec   *Spec
	Role   Agency // Client (opened the stream) or Server
	Stream Stream
	// OnViolation, if set, is called once, when the session ends because the
	// peer violated the protocol, with that error. It may run on any
	// goroutine and must not wait on the session.
	OnViolation func(err error)
	// OnMessage, if set, is called for every message sent or received, with
	// the size of its body (for metrics).
	OnMessage func(dir Direction, m Message, size int)
	// FrameTimeout bounds a frame from its first byte to its length prefix,
	// and with its length at FrameRate (bytes a second) to its last byte:
	// a peer that begins a message and stalls is timed out in any state.
	// Defaults DefaultFrameTimeout and DefaultFrameRate.
	FrameTimeout time.Duration
	FrameRate    int
	// Pace, if set, is called before each piece of n bytes of a frame is
	// written and waits until it may be (the host's budget of bytes
	// served); an error, the session's context ending, fails the send.
	// The frame's write deadline stands still meanwhile: the wait is the
	// host's, not the peer's. Nil: no wait.
	Pace func(ctx context.Context, n int) error
	// Hold, if set, waits until n more bytes may be held for sending (the
	// host's bound on the bytes its servers hold, Session.Hold) and
	// returns their release; an error, the session's context ending,
	// means they may not be. Nil: no bound.
	Hold func(ctx context.Context, n int) (release func(), err error)
}

// Frame deadline defaults: the Cardano node's limit for one multiplexer
// segment to arrive (30 s), and a rate (100 kB/s, 0.8 Mbit/s) far below any
// link a node runs on — a 12 MB LeiosFetch closure gets 150 s.
const (
	DefaultFrameTimeout = 30 * time.Second
	DefaultFrameRate    = 100_000
)

// inboxLimit bounds the received messages waiting for Recv. When it is
// reached the reader stops reading, so a slow consumer slows the peer down
// (backpressure) instead of buffering without bound.
const inboxLimit = 8

// errLocalClose ends a session closed by its owner; only then is the stream
// closed gracefully rather than reset.
var errLocalClose = fmt.Errorf("%w locally", ErrClosed)

// Session runs one Spec over one stream and enforces it: agency, allowed
// messages, size limits and timeouts, in both directions. Send and Recv may
// be called from different goroutines; the owner must call Close.
type Session struct {
	cfg Config

	ctx        context.Context // ends with the session
	cancel     context.CancelFunc
	stopWatch  func() bool   // stops the parent-context watch
	done       chan struct{} // closed once err is set
	readerDone chan struct{}
	arrived    chan struct{} // cap 1: the inbox grew, or the session ended
	taken      chan struct{} // cap 1: Recv took from the inbox

	// writeMu serializes senders so that messages are applied to the state in
	// the order they are written. Lock order: writeMu, then mu.
	writeMu sync.Mutex

	// mu guards every field below. It is never held across I/O.
	mu         sync.Mutex
	state      State
	tokens     int       // left in a counted state (StateSpec.Tokens)
	inbox      []Message // received and applied, waiting for Recv
	pendingIn  []Message // sent ahead by the peer; applied when it regains agency
	pendingOut []Message // sent ahead by us; applied when we regain agency
	stalled    bool      // the reader waits for Recv: the peer is not the slow one
	// writing: our frame is being written; the peer cannot answer what
	// it has not read, so its timeout starts when the write returns.
	writing  bool
	timer    *time.Timer
	timerGen uint64 // invalidates a timer that fired after being replaced
	err      error  // why the session ended; nil while it runs
}

// NewSession starts a session on cfg.Stream. It ends when ctx does, on a
// violation, when the stream fails, or on Close, which must be called.
func NewSession(ctx context.Context, cfg Config) *Session {
	if cfg.FrameTimeout <= 0 {
		cfg.FrameTimeout = DefaultFrameTimeout
	}
	if cfg.FrameRate <= 0 {
		cfg.FrameRate = DefaultFrameRate
	}
	s := &Session{
		cfg:        cfg,
		state:      cfg.Spec.Initial,
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
		arrived:    make(chan struct{}, 1),
		taken:      make(chan struct{}, 1),
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.stopWatch = context.AfterFunc(ctx, func() {
		s.fail(ClosedBy(context.Cause(ctx)))
	})
	s.mu.Lock()
	s.armTimer()
	s.mu.Unlock()
	go s.readLoop()
	return s
}

// Context ends when the session does.
func (s *Session) Context() context.Context { return s.ctx }

// Spec is the protocol the session runs.
func (s *Session) Spec() *Spec { return s.cfg.Spec }

// State is the current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Err is why the session ended, or nil while it runs.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Send applies m to the state and writes it. Sending without agency, or a
// message the state does not allow, is a local bug and returns an error
// without sending; a write failure ends the session.
func (s *Session) Send(m Message) error {
	body, err := Encode(m)
	if err != nil {
		return err
	}
	return s.send(m, len(body), func(w *frameWriter) error {
		_, err := w.Write(body)
		return err
	})
}

// Streamed is a message too large to hold whole — a LeiosFetch closure of
// 12 MB — which SendStreamed writes as it is produced, piece by piece: its
// length is known before its first byte, and with it the frame's prefix.
type Streamed interface {
	// Message is what is sent, as the state machine and OnMessage see it;
	// the part written in pieces (a closure's txs) may be left out of it.
	Message() Message
	// Len is the length of the message's encoding, [tag, payload...].
	Len() int
	// Encode writes the encoding, exactly Len bytes, to w in pieces,
	// each done with once w.Write returns. An error ends the session with
	// it (the frame is cut), unless the session ended first.
	Encode(w io.Writer) error
}

// SendStreamed is Send for a message written in pieces: what the session
// holds of it is the piece being written, not the message. The frame's
// write deadline is the whole frame's, from its first byte.
func (s *Session) SendStreamed(m Streamed) error {
	n := m.Len()
	return s.send(m.Message(), n, func(w *frameWriter) error {
		if err := m.Encode(w); err != nil {
			return err
		}
		if left := w.left; left != 0 {
			return fmt.Errorf("protocol %s: %T wrote %d bytes of the %d it announced", s.cfg.Spec.Name, m.Message(), n-left, n)
		}
		return nil
	})
}

// Hold waits until n more bytes may be held for what the session is about
// to send (Config.Hold: the host's bound on the bytes its servers hold),
// and returns their release. A server that reads a large answer from a
// store holds its bytes before it reads them and releases them once they
// are written, so the answers of all its sessions together stay within
// the bound, however many peers ask and do not read. Without a bound it
// returns at once.
func (s *Session) Hold(n int) (release func(), err error) {
	if s.cfg.Hold == nil || n <= 0 {
		return func() {}, nil
	}
	return s.cfg.Hold(s.ctx, n)
}

// send applies m, whose encoding is n bytes, to the state and writes its
// frame, the encoding written by write.
func (s *Session) send(m Message, n int, write func(*frameWriter) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()

	s.mu.Lock()
	err := s.checkSend(m, n)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.writing = true
	if err = s.applySent(m); err != nil {
		s.writing = false
	}
	s.mu.Unlock()
	if err != nil {
		return s.Fail(err)
	}
	prefix := binary.AppendUvarint(nil, uint64(n))
	w := &frameWriter{s: s, prefix: prefix, left: n, deadline: s.writeDeadline(len(prefix) + n)}
	err = write(w)
	if err == nil && w.prefix != nil { // an empty body: the prefix alone
		err = w.write(w.prefix)
	}
	w.deadline.stop()
	s.mu.Lock()
	s.writing = false
	s.armTimer()
	s.mu.Unlock()
	if err != nil {
		// The session's own error, if it ended first (ErrSlowReader, or
		// the peer's violation): that is why the write failed.
		s.fail(err)
		return s.Err()
	}
	if s.cfg.OnMessage != nil {
		s.cfg.OnMessage(Sent, m, n)
	}
	return nil
}

// frameWriter writes one frame's body after its prefix: each piece paced
// (Config.Pace) and written within the frame's deadline.
type frameWriter struct {
	s        *Session
	prefix   []byte // not yet written: it goes with the first piece
	left     int    // of the body
	deadline *sendDeadline
}

// joinPrefix is the largest first piece the prefix is copied in front of,
// to go in one write; a larger one is written after it.
const joinPrefix = 64 << 10

func (w *frameWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) > w.left {
		return 0, fmt.Errorf("protocol %s: a frame's body written past its length (%d bytes more)", w.s.cfg.Spec.Name, len(p)-w.left)
	}
	if w.prefix != nil {
		prefix := w.prefix
		w.prefix = nil
		if len(p) <= joinPrefix {
			if err := w.write(append(prefix, p...)); err != nil {
				return 0, err
			}
			w.left -= len(p)
			return len(p), nil
		}
		if err := w.write(prefix); err != nil {
			return 0, err
		}
	}
	if err := w.write(p); err != nil {
		return 0, err
	}
	w.left -= len(p)
	return len(p), nil
}

// write paces and writes one piece; a failure ends the session, and is
// its error.
func (w *frameWriter) write(p []byte) error {
	s := w.s
	if s.cfg.Pace != nil {
		w.deadline.pause()
		err := s.cfg.Pace(s.ctx, len(p))
		w.deadline.resume()
		if err != nil {
			s.fail(fmt.Errorf("%w: waiting to send: %w", ErrClosed, err))
			return s.Err()
		}
	}
	if _, err := s.cfg.Stream.Write(p); err != nil {
		s.fail(fmt.Errorf("%w: write: %w", ErrClosed, err))
		return s.Err()
	}
	return nil
}

// sendDeadline bounds the write of a frame of n bytes as the reader
// bounds its arrival: Config.FrameTimeout plus n at Config.FrameRate. A
// peer that does not read what it asked for within that holds the frame,
// and with it whatever the server holds for it, no longer: the session
// fails with ErrSlowReader, which resets the stream and so ends the
// write. The time the frame waits for the host's budget (Config.Pace) does
// not count.
type sendDeadline struct {
	s       *Session
	n       int
	allowed time.Duration
	left    time.Duration // while paused
	since   time.Time     // running since
	timer   *time.Timer   // nil while paused or stopped
}

func (s *Session) writeDeadline(n int) *sendDeadline {
	allowed := s.cfg.FrameTimeout + time.Duration(float64(n)/float64(s.cfg.FrameRate)*float64(time.Second))
	d := &sendDeadline{s: s, n: n, allowed: allowed, left: allowed}
	d.resume()
	return d
}

func (d *sendDeadline) resume() {
	d.since = time.Now()
	d.timer = time.AfterFunc(d.left, func() {
		d.s.fail(fmt.Errorf("%w: a frame of %d bytes not taken within %v", ErrSlowReader, d.n, d.allowed))
	})
}

func (d *sendDeadline) pause() {
	if d.timer != nil && d.timer.Stop() {
		d.left = max(0, d.left-time.Since(d.since))
	}
	d.timer = nil
}

func (d *sendDeadline) stop() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
}

// Recv returns the next message from the peer, already checked against the
// state. Once the session has ended and every received message has been
// returned, it returns the session's error.
func (s *Session) Recv(ctx context.Context) (Message, error) {
	for {
		s.mu.Lock()
		if len(s.inbox) > 0 {
			m := s.inbox[0]
			s.inbox[0] = nil
			s.inbox = s.inbox[1:]
			s.mu.Unlock()
			poke(s.taken)
			return m, nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-s.arrived:
		case <-s.done:
		case <-ctx.Done():
			select {
			case <-s.done: // ctx may be the session's own: report why it ended
			default:
				return nil, ctx.Err()
			}
		}
	}
}

// Fail ends the session with err and returns it. Protocols call it for
// violations the engine cannot see (a block that does not match its
// header, say); an err wrapping ErrViolation is reported as the peer's.
func (s *Session) Fail(err error) error {
	s.fail(err)
	return err
}

// Close ends the session, if it has not ended, closing the stream
// gracefully, and waits for its reader to stop.
func (s *Session) Close() {
	s.fail(errLocalClose)
	s.stopWatch()
	<-s.readerDone
}

// checkSend reports a local misuse: m may not be sent now. mu is held.
func (s *Session) checkSend(m Message, size int) error {
	if s.err != nil {
		return s.err
	}
	sp := s.cfg.Spec
	st := sp.States[s.state]
	switch {
	case st.Agency == s.cfg.Role:
		if _, ok := st.Next[m.Tag()]; !ok {
			return fmt.Errorf("protocol %s: %s may not send %T in state %s", sp.Name, s.cfg.Role, m, s.state)
		}
		if size > st.MaxSize {
			return fmt.Errorf("protocol %s: %T is %d bytes, state %s allows %d", sp.Name, m, size, s.state, st.MaxSize)
		}
	case st.Agency == s.cfg.Role.other() && len(s.pendingOut) < sp.MaxPipelined:
		if size > sp.maxSize(s.cfg.Role) {
			return fmt.Errorf("protocol %s: pipelined %T is %d bytes, over every limit", sp.Name, m, size)
		}
	default:
		return fmt.Errorf("protocol %s: %s has no agency in state %s", sp.Name, s.cfg.Role, s.state)
	}
	return nil
}

// applySent applies a message that passed checkSend. mu is held.
func (s *Session) applySent(m Message) error {
	st := s.cfg.Spec.States[s.state]
	if st.Agency != s.cfg.Role {
		s.pendingOut = append(s.pendingOut, m)
		return nil
	}
	next, _ := s.step(st, m)
	return s.enter(next)
}

// step is the state m leads to from the current state, st: a counted
// state spends a token and is left with the last one, and a state entered
// by a Granter gets its tokens. mu is held.
func (s *Session) step(st StateSpec, m Message) (State, bool) {
	next, ok := st.Next[m.Tag()]
	if !ok {
		return "", false
	}
	if st.Tokens {
		if s.tokens--; s.tokens > 0 {
			return s.state, true
		}
	}
	if g, grants := m.(Granter); grants && s.cfg.Spec.States[next].Tokens {
		s.tokens = max(1, g.Grants())
	}
	return next, true
}

// receive applies a message from the peer. behind counts the frames the
// peer had already sent after it (see framesBuffered): sent before it could
// see our answer to m, they must fit the pipelining room that remains once
// m hands us agency. Judging them now, not when the reader gets to them,
// makes a message sent without agency a violation whether or not our
// answer happens to be written first. mu is held.
func (s *Session) receive(m Message, behind int) error {
	st := s.cfg.Spec.States[s.state]
	peer := s.cfg.Role.other()
	switch {
	case st.Agency == peer:
		next, ok := s.step(st, m)
		if !ok {
			return fmt.Errorf("%w: %s sent %T in state %s", ErrUnexpectedMessage, peer, m, s.state)
		}
		s.deliver(m)
		if err := s.enter(next); err != nil {
			return err
		}
	case st.Agency == s.cfg.Role && len(s.pendingIn) < s.cfg.Spec.MaxPipelined:
		s.pendingIn = append(s.pendingIn, m)
	default:
		return fmt.Errorf("%w: %s sent %T in state %s (agency: %s)", ErrAgency, peer, m, s.state, st.Agency)
	}
	if s.cfg.Spec.States[s.state].Agency != s.cfg.Role {
		return nil
	}
	if room := s.cfg.Spec.MaxPipelined - len(s.pendingIn); behind > room {
		return fmt.Errorf("%w: %s sent %d more before our answer in state %s, room for %d", ErrAgency, peer, behind, s.state, room)
	}
	return nil
}

// enter moves to next, then applies the messages that were sent ahead and
// are now due, and arms the timeout of the state it ends in. mu is held.
func (s *Session) enter(next State) error {
	s.state = next
	sp := s.cfg.Spec
	for {
		st := sp.States[s.state]
		switch {
		case st.Agency == s.cfg.Role.other() && len(s.pendingIn) > 0:
			m := s.pendingIn[0]
			s.pendingIn = s.pendingIn[1:]
			nx, ok := s.step(st, m)
			if !ok {
				return fmt.Errorf("%w: pipelined %T not allowed in state %s", ErrUnexpectedMessage, m, s.state)
			}
			s.deliver(m)
			s.state = nx
		case st.Agency == s.cfg.Role && len(s.pendingOut) > 0:
			m := s.pendingOut[0]
			s.pendingOut = s.pendingOut[1:]
			nx, ok := s.step(st, m)
			if !ok {
				// Our own pipelined message turned out wrong: a local bug,
				// but the peer has it, so the session cannot go on.
				return fmt.Errorf("protocol %s: our pipelined %T not allowed in state %s", sp.Name, m, s.state)
			}
			s.state = nx
		default:
			s.armTimer()
			return nil
		}
	}
}

// deliver queues m for Recv. mu is held.
func (s *Session) deliver(m Message) {
	s.inbox = append(s.inbox, m)
	poke(s.arrived)
}

// armTimer starts the current state's timeout if the peer has agency and we
// are not the ones holding it up (our reader waits for Recv, or our last
// frame is still being written); otherwise it stops the timer. mu is held.
func (s *Session) armTimer() {
	s.timerGen++
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	st := s.cfg.Spec.States[s.state]
	if s.err != nil || s.stalled || s.writing || st.Agency != s.cfg.Role.other() || st.Timeout <= 0 {
		return
	}
	gen, state, d := s.timerGen, s.state, st.Timeout
	s.timer = time.AfterFunc(d, func() {
		s.mu.Lock()
		current := gen == s.timerGen
		s.mu.Unlock()
		if current {
			s.fail(fmt.Errorf("%w: nothing in state %s for %v", ErrTimeout, state, d))
		}
	})
}

// fail ends the session with err; only the first call has an effect.
func (s *Session) fail(err error) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	s.err = err
	s.armTimer() // with err set, this stops it
	s.mu.Unlock()

	close(s.done)
	s.cancel()
	if err == errLocalClose {
		_ = s.cfg.Stream.Close()
	} else {
		_ = s.cfg.Stream.Reset()
	}
	if IsViolation(err) && s.cfg.OnViolation != nil {
		s.cfg.OnViolation(err)
	}
}

// poke signals c without blocking; a pending signal already says it.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
