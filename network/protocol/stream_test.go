package protocol_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// blobSpec is a protocol whose server answers a request with one blob of
// up to 1 MiB.
func blobSpec() *protocol.Spec {
	return &protocol.Spec{
		Name:    "blob",
		Initial: "Idle",
		States: map[protocol.State]protocol.StateSpec{
			"Idle": {Agency: protocol.Client, Next: map[uint64]protocol.State{0: "Busy"}, MaxSize: 16, Timeout: time.Hour},
			"Busy": {Agency: protocol.Server, Next: map[uint64]protocol.State{1: "Idle"}, MaxSize: 1 << 20, Timeout: time.Hour},
		},
		Messages: map[uint64]func() protocol.Message{
			0: func() protocol.Message { return new(request) },
			1: func() protocol.Message { return new(blob) },
		},
	}
}

type blob struct {
	_    struct{} `cbor:",toarray"`
	Data []byte
}

func (*blob) Tag() uint64 { return 1 }

// streamedBlob writes a blob's encoding in pieces of piece bytes, and
// extra bytes past it (or, negative, stops short).
type streamedBlob struct {
	b     *blob
	piece int
	extra int
}

func (s *streamedBlob) Message() protocol.Message { return &blob{} }

func (s *streamedBlob) encoding() []byte {
	enc, err := protocol.Encode(s.b)
	if err != nil {
		panic(err)
	}
	return enc
}

func (s *streamedBlob) Len() int { return len(s.encoding()) }

func (s *streamedBlob) Encode(w io.Writer) error {
	enc := s.encoding()
	if s.extra > 0 {
		enc = append(enc, make([]byte, s.extra)...)
	} else {
		enc = enc[:len(enc)+s.extra]
	}
	for len(enc) > 0 {
		n := min(s.piece, len(enc))
		if _, err := w.Write(enc[:n]); err != nil {
			return err
		}
		enc = enc[n:]
	}
	return nil
}

// blobServer is a server session of blobSpec on one end of a pipe, whose
// other end it returns, with the request already taken.
func blobServer(t *testing.T, cfg protocol.Config) (*protocol.Session, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	cfg.Spec, cfg.Role, cfg.Stream = blobSpec(), protocol.Server, protocoltest.PipeStream{Conn: b}
	s := protocol.NewSession(context.Background(), cfg)
	t.Cleanup(func() { _ = a.Close(); s.Close() })
	go func() { _, _ = a.Write(protocoltest.Frames(t, &request{})) }()
	if _, err := s.Recv(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, a
}

// A message written in pieces makes the frame Send makes of it, and
// OnMessage sees what Message returns, with the encoding's length.
func TestSendStreamedWritesTheFrame(t *testing.T) {
	msg := &blob{Data: bytes.Repeat([]byte{7}, 200_000)}
	var seen protocol.Message
	var size int
	s, peer := blobServer(t, protocol.Config{OnMessage: func(dir protocol.Direction, m protocol.Message, n int) {
		if dir == protocol.Sent {
			seen, size = m, n
		}
	}})
	want := protocoltest.Frames(t, msg)
	sent := make(chan error, 1)
	go func() { sent <- s.SendStreamed(&streamedBlob{b: msg, piece: 1000}) }()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the streamed frame differs from the message's")
	}
	if _, ok := seen.(*blob); !ok || size != len(want)-3 {
		t.Fatalf("OnMessage saw %T of %d bytes, want the blob of %d", seen, size, len(want)-3)
	}
	if s.State() != "Idle" {
		t.Fatalf("state %s after the blob, want Idle", s.State())
	}
}

// A message that writes other than the length it announced is a local bug:
// the session ends (its frame cannot be taken back), not as the peer's
// violation.
func TestSendStreamedOfTheWrongLength(t *testing.T) {
	for _, extra := range []int{-1, 1} {
		var v protocoltest.Violations
		s, peer := blobServer(t, protocol.Config{OnViolation: v.Add})
		go func() { _, _ = io.Copy(io.Discard, peer) }()
		err := s.SendStreamed(&streamedBlob{b: &blob{Data: make([]byte, 100)}, piece: 10, extra: extra})
		if err == nil || s.Err() == nil {
			t.Fatalf("%+d bytes: sent, and the session goes on", extra)
		}
		if protocol.IsViolation(err) || len(v.List()) != 0 {
			t.Fatalf("%+d bytes: %v, reported as the peer's", extra, err)
		}
	}
}

// A frame written in pieces that the peer does not take is cut at the
// whole frame's deadline, FrameTimeout plus its length at FrameRate, from
// its first byte; the time its pieces waited for the host's budget does
// not count. On virtual time.
func TestSendStreamedDeadline(t *testing.T) {
	const timeout, rate = time.Second, 100_000
	msg := &blob{Data: make([]byte, 200_000)}
	frame := len(protocoltest.Frames(t, msg))
	allowed := timeout + time.Duration(float64(frame)/rate*float64(time.Second))
	for _, tc := range []struct {
		name   string
		paced  time.Duration // each piece waits that long for the budget
		reads  bool          // the peer reads, a piece each quarter second
		cutoff bool
	}{
		{"unread", 0, false, true},
		{"unread, paced", time.Minute, false, true},
		{"read at twice the rate, paced", time.Minute, true, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			var v protocoltest.Violations
			pace := func(ctx context.Context, _ int) error {
				select {
				case <-time.After(tc.paced):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			s, peer := blobServer(t, protocol.Config{OnViolation: v.Add, FrameTimeout: timeout, FrameRate: rate, Pace: pace})
			if tc.reads {
				go func() {
					buf := make([]byte, 50_000)
					for {
						if _, err := io.ReadFull(peer, buf); err != nil {
							return
						}
						time.Sleep(time.Second / 4)
					}
				}()
			}
			start := time.Now()
			err := s.SendStreamed(&streamedBlob{b: msg, piece: 50_000})
			if cut := errors.Is(err, protocol.ErrSlowReader); cut != tc.cutoff {
				t.Fatalf("%s: %v after %v", tc.name, err, time.Since(start))
			}
			if tc.cutoff {
				// The deadline runs while the peer holds up the write, not
				// while the budget does: the first piece's wait comes first.
				if took, want := time.Since(start), tc.paced+allowed; took != want {
					t.Fatalf("%s: cut after %v, want %v", tc.name, took, want)
				}
			}
			s.Close()
			_ = peer.Close()
			synctest.Wait()
		})
	}
}

// Hold asks the session's bound for room, and is free without one.
func TestHold(t *testing.T) {
	var asked []int
	s, _ := blobServer(t, protocol.Config{Hold: func(_ context.Context, n int) (func(), error) {
		asked = append(asked, n)
		return func() { asked = append(asked, -n) }, nil
	}})
	release, err := s.Hold(1000)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if len(asked) != 2 || asked[0] != 1000 || asked[1] != -1000 {
		t.Fatalf("the bound saw %v, want 1000 held and released", asked)
	}
	free, _ := blobServer(t, protocol.Config{})
	if release, err := free.Hold(1 << 40); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
}
