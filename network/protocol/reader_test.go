package protocol_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/internal/ping"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// TestStartedFrameMustComplete: a peer that begins a frame and goes silent
// is timed out by the frame deadline, in a state whose own timeout is an
// hour away, and where no state timeout runs at all (the frame is sent
// ahead while we hold agency).
func TestStartedFrameMustComplete(t *testing.T) {
	ping1 := protocoltest.Frames(t, &ping.MsgPing{N: 1})
	for _, tc := range []struct {
		name      string
		pipelined int
		wire      []byte
	}{
		{"length prefix cut", 0, []byte{0x80}},
		{"body cut", 0, ping1[:len(ping1)-1]},
		{"sent ahead, cut", 1, append(ping1, ping1[:2]...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, remote := net.Pipe()
			defer remote.Close()
			var v protocoltest.Violations
			s := protocol.NewSession(context.Background(), protocol.Config{
				Spec: ping.Spec(time.Hour, tc.pipelined), Role: protocol.Server,
				Stream: protocoltest.PipeStream{Conn: local}, OnViolation: v.Add,
				FrameTimeout: 100 * time.Millisecond,
			})
			defer s.Close()
			go func() { _, _ = remote.Write(tc.wire) }()
			<-s.Context().Done()
			if err := s.Err(); !errors.Is(err, protocol.ErrTimeout) {
				t.Fatalf("session ended with %v, want a timeout", err)
			}
		})
	}
}

// TestUnreadFrameFailsTheSender: a frame the peer does not take within
// the frame allowance ends the session with ErrSlowReader, reported as the
// peer's violation, and the blocked Send returns: a peer that asks and never
// reads cannot hold the sender.
func TestUnreadFrameFailsTheSender(t *testing.T) {
	local, remote := net.Pipe() // unbuffered: a write waits for its reader
	defer remote.Close()
	var v protocoltest.Violations
	s := protocol.NewSession(context.Background(), protocol.Config{
		Spec: ping.Spec(time.Hour, 0), Role: protocol.Client,
		Stream: protocoltest.PipeStream{Conn: local}, OnViolation: v.Add,
		FrameTimeout: 100 * time.Millisecond,
	})
	defer s.Close()
	if err := s.Send(&ping.MsgPing{N: 1}); err == nil {
		t.Fatal("a frame nobody read was sent")
	}
	if err := s.Err(); !errors.Is(err, protocol.ErrSlowReader) {
		t.Fatalf("session ended with %v, want ErrSlowReader", err)
	}
	// The violation is reported once the stream is reset, which may be
	// after the blocked write returned.
	for deadline := time.Now().Add(10 * time.Second); len(v.List()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow reader was not reported")
		}
	}
	if got := v.List(); len(got) != 1 || !errors.Is(got[0], protocol.ErrSlowReader) {
		t.Fatalf("violations %v, want one ErrSlowReader", got)
	}
}

// TestFrameInPiecesIsNotTimedOut: a frame that arrives in pieces, within
// its deadline, is read whole.
func TestFrameInPiecesIsNotTimedOut(t *testing.T) {
	local, remote := net.Pipe()
	defer remote.Close()
	var v protocoltest.Violations
	s := protocol.NewSession(context.Background(), protocol.Config{
		Spec: ping.Spec(time.Hour, 0), Role: protocol.Server,
		Stream: protocoltest.PipeStream{Conn: local}, OnViolation: v.Add,
		FrameTimeout: 5 * time.Second,
	})
	defer s.Close()
	wire := protocoltest.Frames(t, &ping.MsgPing{N: 7})
	go func() {
		for _, b := range wire {
			if _, err := remote.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	m, err := s.Recv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := m.(*ping.MsgPing); !ok || p.N != 7 {
		t.Fatalf("got %#v, want ping 7", m)
	}
	if len(v.List()) != 0 {
		t.Fatalf("violations %v", v.List())
	}
}

// TestSentBeforeTheAnswerIsAViolationEveryTime: messages the peer sent
// behind one that handed us agency, before it could see our answer, are a
// violation beyond the pipelining allowed — however fast the server
// answers, on every run.
func TestSentBeforeTheAnswerIsAViolationEveryTime(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pipelined int
		pings     int
		violation bool
	}{
		{"strict, two", 0, 2, true},
		{"one ahead allowed, two", 1, 2, false},
		{"one ahead allowed, three", 1, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []protocol.Message
			for i := range tc.pings {
				msgs = append(msgs, &ping.MsgPing{N: uint64(i)})
			}
			wire := protocoltest.Frames(t, msgs...)
			for run := range 20 {
				local, remote := net.Pipe()
				var v protocoltest.Violations
				// The reader goes on past the first ping only once its pong
				// is out: the order in which judging messages by when they
				// are read lets them through.
				answered := make(chan struct{})
				var once sync.Once
				s := protocol.NewSession(context.Background(), protocol.Config{
					Spec: ping.Spec(time.Hour, tc.pipelined), Role: protocol.Server,
					Stream: protocoltest.PipeStream{Conn: local}, OnViolation: v.Add,
					OnMessage: func(dir protocol.Direction, m protocol.Message, _ int) {
						if p, ok := m.(*ping.MsgPing); ok && dir == protocol.Received && p.N == 0 {
							<-answered
						}
						if dir == protocol.Sent {
							once.Do(func() { close(answered) })
						}
					},
				})
				served := make(chan error, 1)
				go func() { served <- ping.Serve(s.Context(), s) }()
				go func() { _, _ = remote.Write(wire) }()
				pongs := make(chan int, 1)
				go func() { pongs <- readPongs(remote, tc.pings) }()
				got := <-pongs // until all are answered, or the session ends
				_ = remote.Close()
				<-served
				s.Close()
				switch err := s.Err(); {
				case tc.violation && !errors.Is(err, protocol.ErrAgency):
					t.Fatalf("run %d: %d pongs, session ended with %v, want an agency violation", run, got, err)
				case tc.violation && got > 1:
					t.Fatalf("run %d: answered %d pings sent without agency", run, got-1)
				case !tc.violation && got != tc.pings:
					t.Fatalf("run %d: %d pongs for %d pings: %v", run, got, tc.pings, err)
				}
			}
		})
	}
}

// readPongs reads up to n frames (pongs) from the peer's end, and returns
// how many it read before the stream ended.
func readPongs(c net.Conn, n int) int {
	r := bufio.NewReader(c)
	for got := 0; got < n; got++ {
		size, err := protocol.ReadFrameLen(r)
		if err == nil {
			_, err = io.ReadFull(r, make([]byte, size))
		}
		if err != nil {
			return got
		}
	}
	return n
}
