package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The API's limits: a client that sends its request slowly, sends nothing,
// or holds its connection idle is cut off (Options.ReadHeaderTimeout,
// ReadTimeout, IdleTimeout), and requests beyond Options.MaxRequests in
// flight are answered 503 at once rather than queued.

// Defaults of the limits' options.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxRequests       = 64
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

// limited serves h with at most max requests in flight; one more is
// answered 503 at once, so that slow clients cannot hold every handler and
// have the rest wait behind them.
func limited(h http.Handler, max int) http.Handler {
	slots := make(chan struct{}, max)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, fmt.Errorf("busy: %d requests in flight", max))
		}
	})
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
