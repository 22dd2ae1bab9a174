package protocol_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/network/internal/ping"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pair runs a client and a server session of spec over a pipe.
func pair(t *testing.T, spec *protocol.Spec) (client, server *protocol.Session, cv, sv *protocoltest.Violations) {
	t.Helper()
	a, b := net.Pipe()
	cv, sv = new(protocoltest.Violations), new(protocoltest.Violations)
	client = protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Client, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: cv.Add})
	server = protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}, OnViolation: sv.Add})
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server, cv, sv
}

func TestSpecsValidate(t *testing.T) {
	if err := ping.Spec(time.Second, 0).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := streamSpec(time.Second).Validate(); err != nil {
		t.Fatal(err)
	}
	broken := ping.Spec(time.Second, 0)
	broken.States[ping.StIdle] = protocol.StateSpec{Agency: protocol.Client, Next: map[uint64]protocol.State{ping.TagPing: "Nowhere"}, MaxSize: 1, Timeout: time.Second}
	if err := broken.Validate(); err == nil {
		t.Fatal("a transition to an undeclared state validated")
	}
	if err := ping.Spec(0, 0).Validate(); err == nil {
		t.Fatal("a spec whose states wait for ever validated")
	}
}

func TestPingPong(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pipelined int
		depth     int
	}{
		{"strict", 0, 1},
		{"pipelined", 3, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server, cv, sv := pair(t, ping.Spec(time.Second, tc.pipelined))
			served := make(chan error, 1)
			go func() { served <- ping.Serve(server.Context(), server) }()
			ctx := context.Background()
			if err := ping.Exchange(ctx, client, 1, 50, tc.depth); err != nil {
				t.Fatal(err)
			}
			if err := client.Send(&ping.MsgDone{}); err != nil {
				t.Fatal(err)
			}
			if err := <-served; err != nil {
				t.Fatalf("server: %v", err)
			}
			if client.State() != ping.StDone || server.State() != ping.StDone {
				t.Fatalf("states %s / %s, want Done", client.State(), server.State())
			}
			if len(cv.List())+len(sv.List()) != 0 {
				t.Fatalf("violations: %v %v", cv.List(), sv.List())
			}
		})
	}
}

func TestSendWithoutAgencyIsLocalError(t *testing.T) {
	client, server, _, sv := pair(t, ping.Spec(time.Second, 0))
	if err := client.Send(&ping.MsgPong{N: 1}); err == nil {
		t.Fatal("client sent a pong in Idle")
	}
	if err := server.Send(&ping.MsgPong{N: 1}); err == nil {
		t.Fatal("server sent without agency")
	}
	// The misuse was refused, not sent: the session still works.
	go func() { _ = ping.Serve(server.Context(), server) }()
	if err := ping.Exchange(context.Background(), client, 7, 1, 1); err != nil {
		t.Fatal(err)
	}
	if len(sv.List()) != 0 {
		t.Fatalf("violations %v", sv.List())
	}
}

// TestViolations drives one session from a raw peer that breaks the
// protocol in each way the engine must catch.
func TestViolations(t *testing.T) {
	for _, tc := range []struct {
		name      string
		role      protocol.Agency // the session under test
		pipelined int
		wire      func(t *testing.T) []byte
		want      error
	}{
		{"message after done", protocol.Server, 0, func(t *testing.T) []byte {
			return protocoltest.Frames(t, &ping.MsgDone{}, &ping.MsgPing{N: 1})
		}, protocol.ErrAgency},
		{"server speaks in client's state", protocol.Client, 0, func(t *testing.T) []byte {
			return protocoltest.Frames(t, &ping.MsgPong{N: 1})
		}, protocol.ErrAgency},
		{"pipelined beyond the limit", protocol.Server, 1, func(t *testing.T) []byte {
			return protocoltest.Frames(t, &ping.MsgPing{N: 1}, &ping.MsgPing{N: 2}, &ping.MsgPing{N: 3})
		}, protocol.ErrAgency},
		{"pong in idle", protocol.Server, 0, func(t *testing.T) []byte {
			return protocoltest.Frames(t, &ping.MsgPong{N: 1})
		}, protocol.ErrUnexpectedMessage},
		{"oversized", protocol.Server, 0, func(t *testing.T) []byte {
			return protocol.AppendFrame(nil, bytes.Repeat([]byte{0}, ping.MaxSize+1))
		}, protocol.ErrMessageTooLarge},
		{"not CBOR", protocol.Server, 0, func(t *testing.T) []byte {
			return protocol.AppendFrame(nil, []byte{0xff})
		}, protocol.ErrMalformed},
		{"trailing bytes", protocol.Server, 0, func(t *testing.T) []byte {
			return protocol.AppendFrame(nil, []byte{0x82, 0x00, 0x01, 0x00})
		}, protocol.ErrMalformed},
		{"unknown tag", protocol.Server, 0, func(t *testing.T) []byte {
			return protocol.AppendFrame(nil, []byte{0x81, 0x09})
		}, protocol.ErrMalformed},
		{"wrong payload", protocol.Server, 0, func(t *testing.T) []byte {
			return protocol.AppendFrame(nil, []byte{0x82, 0x00, 0x61, 'x'})
		}, protocol.ErrMalformed},
		{"non-minimal length", protocol.Server, 0, func(t *testing.T) []byte {
			return []byte{0x81, 0x00}
		}, protocol.ErrMalformed},
		{"silence", protocol.Server, 0, func(t *testing.T) []byte { return nil }, protocol.ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, remote := net.Pipe()
			defer remote.Close()
			var v protocoltest.Violations
			s := protocol.NewSession(context.Background(), protocol.Config{
				Spec: ping.Spec(50*time.Millisecond, tc.pipelined), Role: tc.role,
				Stream: protocoltest.PipeStream{Conn: local}, OnViolation: v.Add,
			})
			defer s.Close()
			go func() { _, _ = remote.Write(tc.wire(t)) }()

			// The session ends with the violation, reported once, and the
			// stream is torn down under the peer.
			<-s.Context().Done()
			if err := s.Err(); !errors.Is(err, tc.want) {
				t.Fatalf("session error %v, want %v", err, tc.want)
			}
			// The report follows the end: the session tears the stream down
			// first, so a callback that touches the peer cannot block it.
			deadline := time.Now().Add(5 * time.Second)
			for len(v.List()) == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if got := v.List(); len(got) != 1 || !errors.Is(got[0], tc.want) {
				t.Fatalf("reported %v, want one %v", got, tc.want)
			}
			_ = remote.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.Copy(io.Discard, remote); err != nil && !errors.Is(err, io.ErrClosedPipe) {
				t.Fatalf("peer's stream: %v", err)
			}
		})
	}
}

// streamSpec is a protocol where the server streams items after a request,
// like block fetch.
func streamSpec(timeout time.Duration) *protocol.Spec {
	return &protocol.Spec{
		Name:    "stream",
		Initial: "Idle",
		States: map[protocol.State]protocol.StateSpec{
			"Idle":      {Agency: protocol.Client, Next: map[uint64]protocol.State{0: "Streaming"}, MaxSize: 16, Timeout: timeout},
			"Streaming": {Agency: protocol.Server, Next: map[uint64]protocol.State{1: "Streaming", 2: "Idle"}, MaxSize: 16, Timeout: timeout},
		},
		Messages: map[uint64]func() protocol.Message{
			0: func() protocol.Message { return new(request) },
			1: func() protocol.Message { return new(item) },
			2: func() protocol.Message { return new(end) },
		},
	}
}

// TestSlowConsumerIsNotATimeout: when the receiver is the slow one (its
// inbox is full), the peer's timeout does not run.
func TestSlowConsumerIsNotATimeout(t *testing.T) {
	client, server, cv, sv := pair(t, streamSpec(100*time.Millisecond))
	const items = 30
	served := serveItems(server, 1, items)
	if err := client.Send(&request{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // far past the timeout, with a full inbox
	for i := range items {
		m, err := client.Recv(context.Background())
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if it, ok := m.(*item); !ok || it.N != uint64(i) {
			t.Fatalf("got %#v, want item %d", m, i)
		}
	}
	if m, err := client.Recv(context.Background()); err != nil {
		t.Fatal(err)
	} else if _, ok := m.(*end); !ok {
		t.Fatalf("got %#v, want end", m)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if len(cv.List())+len(sv.List()) != 0 {
		t.Fatalf("violations: %v %v", cv.List(), sv.List())
	}
}

// TestTimeoutStartsWhenTheReplyIsTaken: a client that reads a long reply
// slowly gets the server's whole timeout to ask again once it has read the
// last message, not from when the server began writing it (block fetch's
// Idle after a batch the client is still reading). On virtual time.
func TestTimeoutStartsWhenTheReplyIsTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// As many items as the client's inbox holds: the end is the frame
		// whose write waits for the client to read.
		const timeout, items = 100 * time.Millisecond, 8
		client, server, cv, sv := pair(t, streamSpec(timeout))
		served := serveItems(server, 2, items)
		for round := range 2 {
			if err := client.Send(&request{}); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			// The reply fills the client's inbox: the server is still
			// writing its end long after its timeout.
			time.Sleep(4 * timeout)
			for {
				m, err := client.Recv(context.Background())
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if _, ok := m.(*end); ok {
					break
				}
			}
			time.Sleep(timeout / 2) // well inside the timeout, counted from the end's arrival
		}
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		if len(cv.List())+len(sv.List()) != 0 {
			t.Fatalf("violations: %v %v", cv.List(), sv.List())
		}
		client.Close()
		server.Close()
		synctest.Wait()
	})
}

// serveItems answers rounds requests on the stream protocol with items
// items and an end each; the channel gets the first error, or nil.
func serveItems(server *protocol.Session, rounds, items int) <-chan error {
	served := make(chan error, 1)
	go func() {
		for range rounds {
			if _, err := server.Recv(server.Context()); err != nil {
				served <- err
				return
			}
			for i := range items {
				if err := server.Send(&item{N: uint64(i)}); err != nil {
					served <- err
					return
				}
			}
			if err := server.Send(&end{}); err != nil {
				served <- err
				return
			}
		}
		served <- nil
	}()
	return served
}

// The stream protocol's messages: request, item n, end.
type request struct {
	_ struct{} `cbor:",toarray"`
}
type item struct {
	_ struct{} `cbor:",toarray"`
	N uint64
}
type end struct {
	_ struct{} `cbor:",toarray"`
}

func (*request) Tag() uint64 { return 0 }
func (*item) Tag() uint64    { return 1 }
func (*end) Tag() uint64     { return 2 }

func TestCloseIsNotAViolation(t *testing.T) {
	client, server, cv, sv := pair(t, ping.Spec(time.Second, 0))
	client.Close()
	if _, err := server.Recv(context.Background()); !errors.Is(err, protocol.ErrClosed) {
		t.Fatalf("server Recv after peer close: %v", err)
	}
	if len(cv.List())+len(sv.List()) != 0 {
		t.Fatalf("violations: %v %v", cv.List(), sv.List())
	}
}

func TestContextEndsSession(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	s := protocol.NewSession(ctx, protocol.Config{Spec: ping.Spec(time.Second, 0), Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: a}})
	defer s.Close()
	cancel()
	if _, err := s.Recv(context.Background()); !errors.Is(err, protocol.ErrClosed) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv after cancel: %v", err)
	}
}

// A session whose context ends because another session sharing it found a
// violation (a client's sibling streams toward one peer, cancelled
// together) ends closed, naming why, and reports no violation of its own:
// the peer committed one offence, counted once.
func TestSiblingsViolationIsNotCountedAgain(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	offender, _, ov, _ := pair(t, ping.Spec(time.Second, 0))
	a, b := net.Pipe()
	defer b.Close()
	var sibling protocoltest.Violations
	s := protocol.NewSession(ctx, protocol.Config{Spec: ping.Spec(time.Second, 0), Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: sibling.Add})
	defer s.Close()

	cancel(offender.Fail(protocol.ErrMalformed))
	_, err := s.Recv(context.Background())
	if !errors.Is(err, protocol.ErrClosed) || protocol.IsViolation(err) || !strings.Contains(err.Error(), protocol.ErrMalformed.Error()) {
		t.Fatalf("sibling ended with %v, want closed naming the other session's violation, and no violation", err)
	}
	if got := len(ov.List()); got != 1 {
		t.Fatalf("offending session reported %d violations, want 1", got)
	}
	if got := sibling.List(); len(got) != 0 {
		t.Fatalf("sibling reported %v", got)
	}
}
