package protocoltest

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// PipeStream is one end of a synchronous in-memory stream (net.Pipe);
// Reset closes both ends.
type PipeStream struct{ net.Conn }

// Reset closes the pipe.
func (p PipeStream) Reset() error { return p.Conn.Close() }

// Sessions runs a client and a server session of spec over a pipe, closed
// when the test ends. Each side's violation, if it ends on one, arrives on
// its channel.
func Sessions(t testing.TB, ctx context.Context, spec *protocol.Spec) (client, server *protocol.Session, clientViolation, serverViolation <-chan error) {
	t.Helper()
	a, b := net.Pipe()
	cv, sv := make(chan error, 1), make(chan error, 1)
	client = protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Client, Stream: PipeStream{a}, OnViolation: func(err error) { cv <- err }})
	server = protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Server, Stream: PipeStream{b}, OnViolation: func(err error) { sv <- err }})
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server, cv, sv
}

// Violations records the violations a session reports (Config.OnViolation:
// Add), for a test to read (List).
type Violations struct {
	mu   sync.Mutex // guards errs
	errs []error
}

// Add records err.
func (v *Violations) Add(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.errs = append(v.errs, err)
}

// List returns what was recorded, in order.
func (v *Violations) List() []error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]error(nil), v.errs...)
}
