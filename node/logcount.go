package node

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// errorCounter is a slog handler that counts records at level error before
// passing them on, so /status can report errors without a log parser.
type errorCounter struct {
	slog.Handler
	count *atomic.Uint64
}

func countErrors(h slog.Handler, count *atomic.Uint64) slog.Handler {
	return errorCounter{Handler: h, count: count}
}

func (h errorCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.count.Add(1)
	}
	return h.Handler.Handle(ctx, r)
}

func (h errorCounter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return errorCounter{Handler: h.Handler.WithAttrs(attrs), count: h.count}
}

func (h errorCounter) WithGroup(name string) slog.Handler {
	return errorCounter{Handler: h.Handler.WithGroup(name), count: h.count}
}
