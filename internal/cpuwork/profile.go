package cpuwork

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/pprof/profile"
)

// subscriber is a Profile call waiting for windows. Its fields are
// guarded by the Sampler's mu.
type subscriber struct {
	windows []*profile.Profile
	end     time.Time     // when the last of windows ended
	ready   chan struct{} // capacity 1: windows grew
}

// add hands sub the profile of a window that ended at end. Never blocks:
// the sampler must not wait for a caller.
func (sub *subscriber) add(p *profile.Profile, end time.Time) {
	sub.windows = append(sub.windows, p)
	sub.end = end
	select {
	case sub.ready <- struct{}{}:
	default:
	}
}

// subscribe hands sub every window that ends from now on, until
// unsubscribe.
func (s *Sampler) subscribe() *subscriber {
	sub := &subscriber{ready: make(chan struct{}, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[sub] = struct{}{}
	return sub
}

func (s *Sampler) unsubscribe(sub *subscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, sub)
}

// take returns the windows handed to sub since the last take, and when
// the last of them ended.
func (s *Sampler) take(sub *subscriber) ([]*profile.Profile, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	windows := sub.windows
	sub.windows = nil
	return windows, sub.end
}

// Profile is the CPU profile of the windows that end from now until one
// ends d or more from now, merged, their samples with their labels. It
// covers at least d, as /debug/pprof/profile?seconds=d should: the first
// window began before the call and the last may end up to a Window after
// d. It fails when ctx ends, and when that window has not ended within d,
// two Windows and a second (the sampler is not running, or another CPU
// profile holds the profiler).
func (s *Sampler) Profile(ctx context.Context, d time.Duration) (*profile.Profile, error) {
	sub := s.subscribe()
	defer s.unsubscribe(sub)
	until := time.Now().Add(d)
	limit := d + 2*s.opts.Window + time.Second // the second for a busy machine
	giveUp := time.NewTimer(limit)
	defer giveUp.Stop()
	var merged *profile.Profile // the windows so far: one profile, not an hour of them
	count := 0
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cpuwork: profile: %w", ctx.Err())
		case <-giveUp.C:
			return nil, fmt.Errorf("cpuwork: no CPU profile window ended %v or more after the request, within %v (%d ended before): the sampler is not running, or another CPU profile holds the profiler",
				d, limit, count)
		case <-sub.ready:
		}
		windows, end := s.take(sub)
		if len(windows) == 0 {
			continue // taken on the last wake
		}
		count += len(windows)
		if merged != nil {
			windows = append(windows, merged)
		}
		var err error
		if merged, err = profile.Merge(windows); err != nil {
			return nil, fmt.Errorf("cpuwork: merging CPU profile windows: %w", err)
		}
		if !end.Before(until) {
			return merged, nil
		}
	}
}

// maxProfileSeconds bounds ProfileHandler's seconds: an hour is more than
// anyone profiles for, and keeps the duration far from overflowing.
const maxProfileSeconds = 3600

// ProfileHandler serves GET /debug/pprof/profile as net/http/pprof's
// Profile does — the seconds parameter (default 30), a gzipped
// profile.proto as application/octet-stream, errors as text with the
// X-Go-Pprof header — but from the sampler's windows (Profile): the sampler
// holds Go's one CPU profiler, and go tool pprof
// http://host/debug/pprof/profile?seconds=10 keeps working.
func (s *Sampler) ProfileHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	sec, err := strconv.ParseInt(r.FormValue("seconds"), 10, 64)
	if sec <= 0 || err != nil {
		sec = 30
	}
	if sec > maxProfileSeconds {
		serveError(w, http.StatusBadRequest, fmt.Sprintf("profile duration exceeds %d seconds", maxProfileSeconds))
		return
	}
	d := time.Duration(sec) * time.Second
	// The answer may come a window after d.
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 && d+s.opts.Window >= srv.WriteTimeout {
		serveError(w, http.StatusBadRequest, "profile duration exceeds server's WriteTimeout")
		return
	}
	p, err := s.Profile(r.Context(), d)
	if err != nil {
		serveError(w, http.StatusInternalServerError, fmt.Sprintf("Could not profile the CPU: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="profile"`)
	if err := p.Write(w); err != nil {
		s.log.Debug("cpuwork: writing a CPU profile", "err", err) // the client left
	}
}

// serveError is net/http/pprof's: go tool pprof shows the text of a
// response with the X-Go-Pprof header.
func serveError(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Go-Pprof", "1")
	w.Header().Del("Content-Disposition")
	w.WriteHeader(status)
	fmt.Fprintln(w, text)
}
