package ui

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"
)

//go:embed page.html
var pageHTML []byte

// writeTimeout bounds writing one frame to a page: a page that takes
// longer is gone, and its handler ends.
const writeTimeout = 10 * time.Second

// Handler serves the page at / and its frames at /events, as Server-Sent
// Events: each frame one event, the latest first.
func (v *View) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(v.page())
	})
	mux.HandleFunc("GET /events", v.serveEvents)
	return mux
}

// firstFrame is where the page takes the latest frame in.
const firstFrame = "const first = null;"

// page is the page with the latest frame in it, so that it shows the
// devnet at once. A frame is JSON, which is a script's expression, and
// json.Marshal escapes '<', so it cannot end the script early.
func (v *View) page() []byte {
	v.mu.Lock()
	latest := v.latest
	v.mu.Unlock()
	if latest == nil {
		return pageHTML
	}
	return bytes.Replace(pageHTML, []byte(firstFrame), slices.Concat([]byte("const first = "), latest, []byte(";")), 1)
}

// serveEvents streams the frames to one page until it goes or the server
// closes.
func (v *View) serveEvents(w http.ResponseWriter, r *http.Request) {
	p, latest := v.subscribe()
	defer v.unsubscribe(p)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	send := func(frame []byte) error {
		// A recorder without deadlines is fine: only a real page stalls.
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if frame != nil {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", frame); err != nil {
				return err
			}
		}
		return rc.Flush()
	}
	if err := send(latest); err != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case frame := <-p.frames:
			if err := send(frame); err != nil {
				return
			}
		}
	}
}

// Serve serves v on ln until ctx ends, then closes the server and every
// page's stream.
func Serve(ctx context.Context, ln net.Listener, v *View) error {
	srv := &http.Server{Handler: v.Handler(), ReadHeaderTimeout: 5 * time.Second}
	// Close, not Shutdown: the pages' streams never go idle.
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("live view: %w", err)
	}
	return nil
}
