package logging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// stackError prints a stack trace under %+v, as Pebble's errors do.
type stackError struct{}

func (stackError) Error() string { return "pebble: corrupt table 000042.sst" }

func (e stackError) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('+') {
		fmt.Fprintf(s, "%s\n(1) attached stack trace\n  -- stack trace:\n  | github.com/cockroachdb/pebble/v2.(*DB).Get\n  | \t/pebble/db.go:612\n%s", e.Error(), strings.Repeat("  | frame\n", 200))
		return
	}
	fmt.Fprint(s, e.Error())
}

// An error whose %+v is a multi-kB stack trace is written on one line at
// info, its message only; at debug its detail follows, in the same line.
func TestErrorsOnOneLine(t *testing.T) {
	err := fmt.Errorf("leiosdb: reading body: %w", stackError{})
	for _, tc := range []struct {
		level      slog.Level
		wantDetail bool
	}{
		{slog.LevelInfo, false},
		{slog.LevelDebug, true},
	} {
		var out bytes.Buffer
		logger := New(&out, tc.level)
		logger.Warn("store failed", "err", stackError{})
		logger.With("cause", err).Warn("wrapped", slog.Group("g", "err", stackError{}))
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("level %v: %d lines, want 2:\n%s", tc.level, len(lines), out.String())
		}
		if !strings.Contains(lines[0], `err="pebble: corrupt table 000042.sst"`) {
			t.Errorf("level %v: %s, want the error's message", tc.level, lines[0])
		}
		if got := strings.Contains(lines[0], "err_detail=") && strings.Contains(lines[1], "g.err_detail="); got != tc.wantDetail {
			t.Errorf("level %v: detail written %v, want %v:\n%s", tc.level, got, tc.wantDetail, out.String())
		}
		if !tc.wantDetail && len(out.String()) > 400 {
			t.Errorf("level %v: %d bytes for two lines", tc.level, len(out.String()))
		}
	}
	if got := Line(errors.New("a\nb\r\nc")); got != "a; b; c" {
		t.Errorf("Line = %q", got)
	}
}

// A line repeated by one key is written Burst times a window; the next
// written after the window carries the count held back. Other keys are not
// held back by it. On virtual time.
func TestLimiterCountsWhatItHoldsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		logger := New(&out, slog.LevelInfo)
		l := NewLimiter(time.Minute, 3)
		ctx := context.Background()
		for range 1000 {
			l.Log(ctx, logger, slog.LevelInfo, "peerA", "request not held", "n", 1)
		}
		l.Log(ctx, logger, slog.LevelInfo, "peerB", "request not held")
		l.Log(ctx, logger, slog.LevelInfo, "peerA", "another line")
		if got := strings.Count(out.String(), "\n"); got != 5 {
			t.Fatalf("%d lines, want 3 of peerA's flood, peerB's and peerA's other line:\n%s", got, out.String())
		}
		time.Sleep(time.Minute)
		out.Reset()
		l.Log(ctx, logger, slog.LevelInfo, "peerA", "request not held")
		if !strings.Contains(out.String(), "suppressed=997") {
			t.Fatalf("after the window: %q, want suppressed=997", out.String())
		}
	})
}

// Past MaxKeys, fresh keys share one window: a flood from fresh identities
// costs the lines of one.
func TestLimiterBoundsItsKeys(t *testing.T) {
	var out bytes.Buffer
	logger := New(&out, slog.LevelInfo)
	l := NewLimiter(time.Minute, 1)
	l.maxKeys = 10
	for i := range 1000 {
		l.Log(context.Background(), logger, slog.LevelInfo, fmt.Sprint("peer", i), "violation")
	}
	if got := strings.Count(out.String(), "\n"); got != 11 {
		t.Fatalf("%d lines from 1000 fresh keys, want 10 and one for all the rest", got)
	}
	if len(l.windows) != 11 {
		t.Fatalf("%d windows remembered, want 11", len(l.windows))
	}
}

// The zero Limiter has the defaults.
func TestZeroLimiter(t *testing.T) {
	var out bytes.Buffer
	logger := New(&out, slog.LevelInfo)
	var l Limiter
	for range 10 {
		l.Log(context.Background(), logger, slog.LevelInfo, "p", "line")
	}
	if got := strings.Count(out.String(), "\n"); got != DefaultBurst {
		t.Fatalf("%d lines, want %d", got, DefaultBurst)
	}
}
