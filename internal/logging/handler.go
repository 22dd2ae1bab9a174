package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// New is the node's logger: text lines to w from level up, each error on
// one line (Handler).
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})))
}

// Handler writes every error attribute as its message on one line, and
// hands everything else to the handler it wraps. slog's text handler
// formats an error with %+v, which for some libraries' errors (Pebble's,
// cockroachdb/errors) is a stack trace of several kB over many lines; the
// Handler adds that detail, as <key>_detail, only when the wrapped handler
// is enabled at debug.
type Handler struct {
	inner slog.Handler
}

// NewHandler wraps inner.
func NewHandler(inner slog.Handler) *Handler { return &Handler{inner: inner} }

// Enabled is the wrapped handler's.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle writes r with its errors on one line.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	debug := h.inner.Enabled(ctx, slog.LevelDebug)
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(oneLine(a, debug)...)
		return true
	})
	return h.inner.Handle(ctx, out)
}

// WithAttrs wraps the wrapped handler's, its errors on one line.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var out []slog.Attr
	debug := h.inner.Enabled(context.Background(), slog.LevelDebug)
	for _, a := range attrs {
		out = append(out, oneLine(a, debug)...)
	}
	return &Handler{inner: h.inner.WithAttrs(out)}
}

// WithGroup wraps the wrapped handler's.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name)}
}

// oneLine is a with its errors, in groups too, as one-line strings, each
// followed by its detail when debug is on and the detail says more.
func oneLine(a slog.Attr, debug bool) []slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		var group []slog.Attr
		for _, g := range v.Group() {
			group = append(group, oneLine(g, debug)...)
		}
		return []slog.Attr{{Key: a.Key, Value: slog.GroupValue(group...)}}
	case slog.KindAny:
		err, ok := v.Any().(error)
		if !ok || err == nil {
			return []slog.Attr{{Key: a.Key, Value: v}}
		}
		msg := Line(err)
		out := []slog.Attr{slog.String(a.Key, msg)}
		if debug {
			if detail := fmt.Sprintf("%+v", err); detail != err.Error() {
				out = append(out, slog.String(a.Key+"_detail", detail))
			}
		}
		return out
	}
	return []slog.Attr{{Key: a.Key, Value: v}}
}

// Line is err's message on one line: its line breaks become "; ".
func Line(err error) string {
	msg := err.Error()
	if !strings.ContainsAny(msg, "\r\n") {
		return msg
	}
	return strings.Join(strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
}
