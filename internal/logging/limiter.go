package logging

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"
)

// Limiter rate-limits repeated log lines per key and message: each (key,
// message) may log Burst lines per window of Every; the lines past that are
// counted, not written, and the first line let through afterwards carries
// their count (suppressed=N). A flood from one peer costs a few lines a
// window whatever its rate.
//
// What it remembers is bounded: past MaxKeys (key, message) pairs it drops
// those whose window is over, and if none is, new keys share one window —
// so fresh identities cost no more lines than one. The zero Limiter has
// the defaults.
type Limiter struct {
	every   time.Duration
	burst   int
	maxKeys int

	mu      sync.Mutex // guards windows; never held while logging
	windows map[lineKey]*window
}

type lineKey struct{ key, msg string }

type window struct {
	start      time.Time
	logged     int // lines let through since start
	suppressed int // lines held back since the last let through
}

// Limiter defaults: three lines a minute per peer and message, and the
// state of 4,096 of them (a few hundred kB).
const (
	DefaultEvery   = time.Minute
	DefaultBurst   = 3
	DefaultMaxKeys = 4096
)

// overflowKey is the key the new keys share once MaxKeys are remembered.
const overflowKey = "\x00overflow"

// NewLimiter lets burst lines per key and message through per every;
// non-positive arguments take the defaults.
func NewLimiter(every time.Duration, burst int) *Limiter {
	if every <= 0 {
		every = DefaultEvery
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	return &Limiter{every: every, burst: burst, maxKeys: DefaultMaxKeys, windows: make(map[lineKey]*window)}
}

// Log writes msg with args at level to logger unless key has written msg
// Burst times in the current window; then it counts the line. A line
// written after some were held back gets the attribute suppressed, their
// number. A nil Limiter writes every line.
func (l *Limiter) Log(ctx context.Context, logger *slog.Logger, level slog.Level, key, msg string, args ...any) {
	if !logger.Enabled(ctx, level) {
		return
	}
	if l == nil {
		logger.Log(ctx, level, msg, args...)
		return
	}
	suppressed, ok := l.allow(key, msg, time.Now())
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	logger.Log(ctx, level, msg, args...)
}

// allow reports whether a line of (key, msg) may be written now, and how
// many were held back before it.
func (l *Limiter) allow(key, msg string, now time.Time) (suppressed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.windows == nil {
		l.every, l.burst, l.maxKeys = cmp.Or(l.every, DefaultEvery), cmp.Or(l.burst, DefaultBurst), cmp.Or(l.maxKeys, DefaultMaxKeys)
		l.windows = make(map[lineKey]*window)
	}
	k := lineKey{key, msg}
	w := l.windows[k]
	if w == nil {
		if len(l.windows) >= l.maxKeys {
			l.sweep(now)
		}
		if len(l.windows) >= l.maxKeys {
			k = lineKey{overflowKey, msg}
			w = l.windows[k]
		}
		if w == nil {
			w = &window{start: now}
			l.windows[k] = w
		}
	}
	if now.Sub(w.start) >= l.every {
		w.start, w.logged = now, 0
	}
	if w.logged >= l.burst {
		w.suppressed++
		return 0, false
	}
	w.logged++
	suppressed, w.suppressed = w.suppressed, 0
	return suppressed, true
}

// sweep forgets the windows that are over (with the count of a flood that
// has stopped). mu is held; it runs only when the map is full.
func (l *Limiter) sweep(now time.Time) {
	for k, w := range l.windows {
		if now.Sub(w.start) >= l.every {
			delete(l.windows, k)
		}
	}
}
