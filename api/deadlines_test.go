package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// pipeListener serves connections made of net.Pipe, whose deadlines run on
// a synctest bubble's clock; each comes from the address its client
// names, so the limits per address apply.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(10, 0, 0, 254), Port: 80} }

// dial connects a client from the address ip.
func (l *pipeListener) dial(ip string) net.Conn {
	server, client := net.Pipe()
	l.conns <- remoteConn{server, &net.TCPAddr{IP: net.ParseIP(ip), Port: 1000}}
	return client
}

type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.remote }

// servePipes serves s on a pipeListener until the bubble's test ends.
func servePipes(t *testing.T, s *Server) *pipeListener {
	l := newPipeListener()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serveHTTP(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return l
}

// upload sends a submit's headers announcing a body of length bytes, and
// body, on c; the rest of the body never comes.
func upload(t *testing.T, c net.Conn, length int, body string) {
	t.Helper()
	go func() {
		_, _ = fmt.Fprintf(c, "POST /api/submit/tx HTTP/1.1\r\nHost: node\r\nContent-Type: application/cbor\r\nContent-Length: %d\r\n\r\n%s", length, body)
	}()
}

func answer(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body)
}

// On the bubble's clock, to the nanosecond: an upload is cut off at
// UploadGrace plus its length at MinUploadRate; a write of an answer at
// WriteTimeout plus its length at WriteRate.
func TestDeadlinesAreSizedByLength(t *testing.T) {
	db := bigChain(t, 2, 1000) // outside the bubble: Pebble's goroutines are not the test's
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Options{Chain: db, MaxTxSize: 16384, Registry: prometheus.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		if err := s.limits.register(reg); err != nil {
			t.Fatal(err)
		}
		l := servePipes(t, s)

		c := l.dial("10.0.0.1")
		start := time.Now()
		upload(t, c, 16384, "")
		code, reply := answer(t, c)
		if took, want := time.Since(start), DefaultUploadGrace+time.Second; code != http.StatusRequestTimeout || took != want {
			t.Errorf("a max-size body that never comes: %d %s after %v, want 408 after %v", code, reply, took, want)
		}
		c.Close()

		// The answer's length, read in full.
		c = l.dial("10.0.0.1")
		_, _ = fmt.Fprintf(c, "GET /api/blocks HTTP/1.1\r\nHost: node\r\n\r\n")
		_, page := answer(t, c)
		// Then unread: the write of that page is cut off at its deadline.
		_, _ = fmt.Fprintf(c, "GET /api/blocks HTTP/1.1\r\nHost: node\r\n\r\n")
		start = time.Now()
		deadline := DefaultWriteTimeout + time.Duration(len(page))*time.Second/DefaultWriteRate
		cut := func() float64 {
			return limitMetric(t, reg, "leiosnode_api_answers_cut_total", map[string]string{"reason": "deadline"})
		}
		time.Sleep(deadline - time.Millisecond)
		synctest.Wait()
		if n := cut(); n != 0 {
			t.Fatalf("a page of %d bytes cut off before %v", len(page), deadline)
		}
		if n := limitMetric(t, reg, "leiosnode_api_unread_bytes", nil); n != float64(len(page)) {
			t.Errorf("%v unread bytes, want the page's %d", n, len(page))
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := cut(); n != 1 {
			t.Fatalf("a page of %d bytes not cut off %v after it was written", len(page), time.Since(start))
		}
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
}

// On the bubble's clock: with every upload slot held by bodies that do
// not come, another client's submit waits until one of them is behind the
// minimum rate for a quarter of UploadGrace, then takes its slot, and the
// slow one is answered 408 naming why. The address cut off takes no one's
// slot after: over a full pool again it is answered 503 at once.
func TestSubmitTakesTheSlowestUploadsSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Options{MaxTxSize: 16384, Registry: prometheus.NewRegistry(), MaxUploads: 2, MaxUploadsPerClient: 2})
		if err != nil {
			t.Fatal(err)
		}
		l := servePipes(t, s)
		slow := []net.Conn{l.dial("10.0.0.1"), l.dial("10.0.0.1")}
		upload(t, slow[0], 16384, "")
		upload(t, slow[1], 16384, "x") // a byte: the other is the slowest
		synctest.Wait()
		start := time.Now()
		other := l.dial("10.0.0.2")
		upload(t, other, 8, "not a tx")
		code, reply := answer(t, other)
		if took, want := time.Since(start), DefaultUploadGrace/4; code != http.StatusBadRequest || took != want {
			t.Errorf("another client's submit: %d %s after %v, want 400 after %v", code, reply, took, want)
		}
		code, reply = answer(t, slow[0])
		if code != http.StatusRequestTimeout || !strings.Contains(reply, ErrCutOff.Error()) {
			t.Errorf("the slowest upload: %d %s, want 408, cut off to make room", code, reply)
		}
		slow[0].Close()
		synctest.Wait()

		third := l.dial("10.0.0.3")
		upload(t, third, 16384, "")
		synctest.Wait()
		again := l.dial("10.0.0.1")
		upload(t, again, 16384, "")
		start = time.Now()
		code, reply = answer(t, again)
		if code != http.StatusServiceUnavailable || time.Since(start) != 0 {
			t.Errorf("the address cut off, over a full pool: %d %s after %v, want 503 at once", code, reply, time.Since(start))
		}
		for _, c := range []net.Conn{slow[1], other, third, again} {
			c.Close()
		}
	})
}
