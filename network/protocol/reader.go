package protocol

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// The reader: each session's one goroutine that reads the peer's frames,
// checks each against the state before its body is read, bounds how long a
// frame may take once it has begun, and applies it.

func (s *Session) readLoop() {
	defer close(s.readerDone)
	r := bufio.NewReader(s.cfg.Stream)
	for s.waitRoom() {
		if err := s.readOne(r); err != nil {
			s.fail(err)
			return
		}
	}
}

// readOne reads, checks and applies one message. The agency and the size
// are checked on the length prefix, before the body is read. From its first
// byte the frame runs against its deadline (frameDeadline), whatever the
// state's own timeout.
func (s *Session) readOne(r *bufio.Reader) error {
	if _, err := r.Peek(1); err != nil { // the next frame's first byte
		if errors.Is(err, io.EOF) {
			err = errFrameEOF
		}
		return s.readErr(err)
	}
	deadline := s.startFrame()
	defer deadline.stop()
	n, err := ReadFrameLen(r)
	if err != nil {
		return s.readErr(err)
	}
	s.mu.Lock()
	limit, err := s.recvLimit()
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if n > uint64(limit) {
		return fmt.Errorf("%w: %d bytes in state %s, limit %d", ErrMessageTooLarge, n, s.State(), limit)
	}
	deadline.extend(s, n)
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return s.readErr(err)
	}
	deadline.stop()
	m, err := s.cfg.Spec.Decode(body)
	if err != nil {
		return err
	}
	behind := framesBuffered(r)
	s.mu.Lock()
	err = s.receive(m, behind)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if s.cfg.OnMessage != nil {
		s.cfg.OnMessage(Received, m, len(body))
	}
	return nil
}

// framesBuffered counts the frames that have already arrived, whole or
// begun, in r's buffer: what the peer sent before it could have seen
// anything we send from now on.
func framesBuffered(r *bufio.Reader) int {
	buf, _ := r.Peek(r.Buffered())
	frames := 0
	for len(buf) > 0 {
		frames++
		size, k := binary.Uvarint(buf)
		if k <= 0 || uint64(len(buf)-k) < size {
			break // a frame begun, or a prefix the reader will refuse
		}
		buf = buf[k+int(size):]
	}
	return frames
}

// recvLimit is the size limit for the next message from the peer, or
// ErrAgency if the peer may not send at all. mu is held.
func (s *Session) recvLimit() (int, error) {
	st := s.cfg.Spec.States[s.state]
	peer := s.cfg.Role.other()
	switch {
	case st.Agency == peer:
		return st.MaxSize, nil
	case st.Agency == s.cfg.Role && len(s.pendingIn) < s.cfg.Spec.MaxPipelined:
		return s.cfg.Spec.maxSize(peer), nil
	default:
		return 0, fmt.Errorf("%w: %s sent in state %s (agency: %s)", ErrAgency, peer, s.state, st.Agency)
	}
}

// readErr classifies a read failure: malformed framing is the peer's
// fault; a stream that ends or breaks is not.
func (s *Session) readErr(err error) error {
	switch {
	case errors.Is(err, ErrMalformed):
		return err
	case errors.Is(err, errFrameEOF):
		return fmt.Errorf("%w: by the peer in state %s", ErrClosed, s.State())
	default:
		return fmt.Errorf("%w: read: %w", ErrClosed, err)
	}
}

// waitRoom blocks while the inbox is full; it reports whether the session
// still runs. While it waits, the timeout is off: the delay is ours.
func (s *Session) waitRoom() bool {
	for {
		s.mu.Lock()
		if s.err != nil {
			s.mu.Unlock()
			return false
		}
		if len(s.inbox) < inboxLimit {
			if s.stalled {
				s.stalled = false
				s.armTimer()
			}
			s.mu.Unlock()
			return true
		}
		if !s.stalled {
			s.stalled = true
			s.armTimer()
		}
		s.mu.Unlock()
		select {
		case <-s.taken:
		case <-s.done:
			return false
		}
	}
}

// frameDeadline bounds the arrival of one frame from its first byte: its
// length prefix within Config.FrameTimeout, and the whole frame within
// FrameTimeout plus its length at Config.FrameRate. A peer that starts a
// frame and goes silent ends the session with ErrTimeout, in any state —
// also where the state's own timeout is long, or not running because we
// hold agency and the frame is sent ahead.
type frameDeadline struct {
	start time.Time
	timer *time.Timer
	gen   atomic.Uint64 // bumped by each arm and by stop: a late firing of an older timer does nothing
}

// startFrame starts the deadline of a frame whose first byte has arrived.
func (s *Session) startFrame() *frameDeadline {
	d := &frameDeadline{start: time.Now()}
	d.arm(s, s.cfg.FrameTimeout, "a frame's length")
	return d
}

// extend gives a frame of n bytes its full allowance.
func (d *frameDeadline) extend(s *Session, n uint64) {
	rate := time.Duration(float64(n) / float64(s.cfg.FrameRate) * float64(time.Second))
	d.arm(s, s.cfg.FrameTimeout+rate, fmt.Sprintf("a frame of %d bytes", n))
}

func (d *frameDeadline) arm(s *Session, allowed time.Duration, what string) {
	gen := d.gen.Add(1)
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timer = time.AfterFunc(time.Until(d.start.Add(allowed)), func() {
		if d.gen.Load() == gen {
			s.fail(fmt.Errorf("%w: %s not complete %v after it began", ErrTimeout, what, allowed))
		}
	})
}

// stop disarms the deadline; stopping twice is harmless.
func (d *frameDeadline) stop() {
	d.gen.Add(1)
	d.timer.Stop()
}
