package api

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// The API's limits: a client that sends its request slowly, sends nothing,
// or holds its connection idle is cut off (Options.ReadHeaderTimeout,
// ReadTimeout, IdleTimeout), and requests beyond Options.MaxRequests in
// flight are answered 503 at once rather than queued. Requests with a body
// (submits) take at most Options.MaxUploads of those, and at most
// MaxUploadsPerClient from one address may be sending their bodies at once:
// slow uploads, reconnecting as each is cut off, can never hold the slots
// /status, /metrics and the lookups are answered from, nor shut out other
// clients' submits; a fast client's body is read at once, so its slot is
// free again as soon as its submit is being validated.

// Defaults of the limits' options.
const (
	DefaultReadHeaderTimeout   = 5 * time.Second
	DefaultReadTimeout         = 10 * time.Second
	DefaultIdleTimeout         = 60 * time.Second
	DefaultMaxRequests         = 64
	DefaultMaxUploads          = DefaultMaxRequests / 2
	DefaultMaxUploadsPerClient = 4
)

// httpServer is the HTTP server of the API's routes, with its timeouts.
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
	}
}

// limited serves h within the limits of requests in flight; a request
// over one is answered 503 at once, so that slow clients cannot hold every
// handler and have the rest wait behind them.
func limited(h http.Handler, o Options) http.Handler {
	l := &limiter{
		all:      make(chan struct{}, o.MaxRequests),
		uploads:  make(chan struct{}, o.MaxUploads),
		perHost:  o.MaxUploadsPerClient,
		fromHost: make(map[string]int),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		release, err := l.acquire(r)
		if err != nil {
			if r.ContentLength != 0 {
				// Answer now and close, rather than receive the unread
				// body first, as the server would to keep the connection.
				w.Header().Set("Connection", "close")
			}
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, err)
			return
		}
		defer release()
		h.ServeHTTP(w, r)
	})
}

// limiter counts the requests in flight: all of them, those with a body,
// and the bodies being received per client address.
type limiter struct {
	all, uploads chan struct{}
	perHost      int

	mu       sync.Mutex     // guards fromHost
	fromHost map[string]int // bodies being received per client address
}

// acquire takes r's slots, or none and says which limit it is over. A
// request with a body holds its client's slot until its body is read.
func (l *limiter) acquire(r *http.Request) (release func(), err error) {
	var held []func()
	release = func() {
		for _, f := range held {
			f()
		}
	}
	take := func(slots chan struct{}, what string) error {
		select {
		case slots <- struct{}{}:
			held = append(held, func() { <-slots })
			return nil
		default:
			release()
			return fmt.Errorf("busy: %d %s in flight", cap(slots), what)
		}
	}
	if err := take(l.all, "requests"); err != nil {
		return nil, err
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		return release, nil
	}
	if err := take(l.uploads, "uploads"); err != nil {
		return nil, err
	}
	host, _, splitErr := net.SplitHostPort(r.RemoteAddr)
	if splitErr != nil {
		host = r.RemoteAddr
	}
	l.mu.Lock()
	if l.fromHost[host] >= l.perHost {
		l.mu.Unlock()
		release()
		return nil, fmt.Errorf("busy: %d uploads from %s being received", l.perHost, host)
	}
	l.fromHost[host]++
	l.mu.Unlock()
	var once sync.Once
	bodyDone := func() {
		once.Do(func() {
			l.mu.Lock()
			if l.fromHost[host]--; l.fromHost[host] == 0 {
				delete(l.fromHost, host)
			}
			l.mu.Unlock()
		})
	}
	held = append(held, bodyDone)
	r.Body = &releasingBody{ReadCloser: r.Body, done: bodyDone}
	return release, nil
}

// releasingBody calls done once its body is read to the end or fails.
type releasingBody struct {
	io.ReadCloser
	done func()
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.done()
	}
	return n, err
}

// readBody reads r's body of at most limit bytes. It answers, and returns
// false, when the body is larger (413, naming the limit), arrives too
// slowly (408) or fails otherwise (400).
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, bool) {
	tooLarge := fmt.Errorf("%s over the limit of %d bytes", what, limit)
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var over *http.MaxBytesError
	var timeout interface{ Timeout() bool }
	switch {
	case err == nil:
		return body, true
	case errors.As(err, &over):
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
	case errors.As(err, &timeout) && timeout.Timeout():
		writeError(w, http.StatusRequestTimeout, fmt.Errorf("%s not received in time", what))
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the %s: %w", what, err))
	}
	return nil, false
}
