package api

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// serveLimited runs the API's HTTP server, with opts's limits, on a
// loopback port until the test ends, and returns its address.
func serveLimited(t *testing.T, opts Options) string {
	t.Helper()
	_, addr := serveLimitedServer(t, opts)
	return addr
}

// serveLimitedServer is serveLimited, and the server.
func serveLimitedServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	opts.MaxTxSize, opts.Registry = 16384, prometheus.NewRegistry()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serveHTTP(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s, l.Addr().String()
}

// slowClient sends a submit's headers, announcing a body of size bytes,
// then the body a byte every interval; it returns the connection.
func slowClient(t *testing.T, addr string, size int, interval time.Duration) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	fmt.Fprintf(c, "POST /api/submit/tx HTTP/1.1\r\nHost: node\r\nContent-Type: application/cbor\r\nContent-Length: %d\r\n\r\n", size)
	go func() {
		for range size {
			if _, err := c.Write([]byte{0}); err != nil {
				return
			}
			time.Sleep(interval)
		}
	}()
	return c
}

// closedBy waits until the server closes c, after sending what it had to
// send, and returns that.
func closedBy(t *testing.T, c net.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection is still open after 10 s; read %q", got)
	}
	return string(got)
}

func TestOversizeBodyIs413(t *testing.T) {
	s, err := New(Options{MaxTxSize: 16384, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	for _, declared := range []bool{true, false} {
		// A MultiReader hides the length, as a chunked body does.
		req := httptest.NewRequest(http.MethodPost, "/api/submit/tx", io.MultiReader(bytes.NewReader(make([]byte, 20000))))
		if declared {
			req.ContentLength = 20000
		}
		req.Header.Set("Content-Type", "application/cbor")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "16384") {
			t.Fatalf("length declared %v: %d %s, want 413 naming the limit", declared, rec.Code, rec.Body)
		}
	}
}

func TestSlowBodyIsCutOff(t *testing.T) {
	addr := serveLimited(t, Options{ReadTimeout: 300 * time.Millisecond})
	c := slowClient(t, addr, 100, 50*time.Millisecond) // 5 s for the whole body
	if got := closedBy(t, c); !strings.HasPrefix(got, "HTTP/1.1 408") {
		t.Fatalf("a body sent a byte at a time got %q, want 408", got)
	}
}

func TestStalledConnectionsAreClosed(t *testing.T) {
	addr := serveLimited(t, Options{ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	var conns []net.Conn
	for i := range 200 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%2 == 0 { // headers begun, never finished
			_, _ = c.Write([]byte("GET /status HTTP/1.1\r\nHost: node\r\n"))
		} // else: nothing sent at all
		conns = append(conns, c)
	}
	// One that made a request and keeps the connection idle.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	_, _ = idle.Write([]byte("POST /api/submit/tx HTTP/1.1\r\nHost: node\r\nContent-Length: 0\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var wg sync.WaitGroup
	for _, c := range append(conns, idle) {
		wg.Go(func() { closedBy(t, c) })
	}
	wg.Wait()
}

func TestBusyIs503(t *testing.T) {
	addr := serveLimited(t, Options{MaxRequests: 2})
	for range 2 { // two slow submits hold both slots until the read timeout, past the deadline below
		slowClient(t, addr, 1000, 50*time.Millisecond)
	}
	busy := func() bool {
		resp, err := http.Get("http://" + addr + "/api/mempool/00")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != ""
	}
	deadline := time.Now().Add(5 * time.Second)
	for !busy() {
		if time.Now().After(deadline) {
			t.Fatal("a third request in flight was not answered 503")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// 64 slow uploads from one address, as many as MaxRequests, leave the reads
// and other clients' submits answered: that address may be sending at most
// MaxUploadsPerClient bodies at once, the rest are 503 at once, and uploads
// never take more than MaxUploads of the slots.
func TestSlowUploadsStarveNoOne(t *testing.T) {
	// A grace past the test: the slow uploads are not cut off for their
	// rate while it runs.
	addr := serveLimited(t, Options{UploadGrace: 10 * time.Second})
	var conns []net.Conn
	for range DefaultMaxRequests {
		conns = append(conns, slowClient(t, addr, 1000, 50*time.Millisecond)) // 50 s a body, past the test
	}
	refused := 0
	for _, c := range conns {
		// The accepted ones say nothing before their body is in, 50 s
		// away; a refusal is answered at once, within a second on a busy
		// machine too.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
				refused++
			}
		}
	}
	if want := DefaultMaxRequests - DefaultMaxUploadsPerClient; refused != want {
		t.Fatalf("%d slow uploads from one address refused at once, want %d", refused, want)
	}
	get, err := http.Get("http://" + addr + "/api/mempool/00")
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != http.StatusBadRequest { // a bad id: it reached its handler
		t.Fatalf("a read while the slow uploads hang: %d", get.StatusCode)
	}
	// Another client's submit is received and judged (garbage: 400).
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	post, err := other.Post("http://"+addr+"/api/submit/tx", "application/cbor", strings.NewReader("not a tx"))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusBadRequest {
		t.Fatalf("another client's submit while the slow uploads hang: %d", post.StatusCode)
	}
}

// Go's profiles are served only when the config asks: a profile or a trace
// costs the node, and anyone who reaches the API could ask for one.
func TestPprofOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		s, err := New(Options{MaxTxSize: 16384, Registry: prometheus.NewRegistry(), Pprof: on})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
		if want := map[bool]int{false: http.StatusNotFound, true: http.StatusOK}[on]; rec.Code != want {
			t.Errorf("pprof %v: GET /debug/pprof/ = %d, want %d", on, rec.Code, want)
		}
	}
}
