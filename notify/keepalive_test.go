package notify_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/notify"
)

// TestQuietServerIsNotTimedOut: a client that hears nothing for KeepAlive
// ends its stream (ErrQuiet, for the host to open a new one) before its
// wait for the server runs out; neither end is found in violation.
func TestQuietServerIsNotTimedOut(t *testing.T) {
	const busy = 300 * time.Millisecond
	n := newTestNet(t, 1)
	server := n.relay(t)
	client := n.relay(t, func(o *notify.Options) { o.KeepAlive = busy / 3 })
	spec := notify.Spec().WithTimeouts(protocol.Timeouts{notify.StBusy: busy})
	a, b := net.Pipe()
	cv, sv := new(protocoltest.Violations), new(protocoltest.Violations)
	cs := protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Client, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: cv.Add})
	ss := protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}, OnViolation: sv.Add})
	served := make(chan error, 1)
	go func() { served <- server.Serve(ss.Context(), ss) }()

	if err := client.Follow(context.Background(), notify.Peer{ID: upstream}, cs); !errors.Is(err, notify.ErrQuiet) {
		t.Fatalf("Follow ended with %v, want ErrQuiet", err)
	}
	cs.Close() // as the host does when the client returns
	if err := <-served; !errors.Is(err, protocol.ErrClosed) {
		t.Fatalf("Serve ended with %v, want the stream closed", err)
	}
	ss.Close()
	if len(cv.List())+len(sv.List()) != 0 {
		t.Fatalf("violations: client %v, server %v", cv.List(), sv.List())
	}
}
