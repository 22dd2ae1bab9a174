// Package simtrace writes a node's events in the trace format the Leios
// simulators share with their analysis and visualisation tools: JSON lines
// {"time_s": …, "message": {"type": …, …}}, one event a line, so that a
// devnet's run and a simulator's can be put on the same plots. The format
// is defined by the Leios repository's data/simulation/trace.shared.d.ts;
// docs/operations.md maps the node's events to its types and says what has
// no counterpart.
//
// It also owns the checks that the format's readers can read what it
// writes: Check, each line with the fields they require, and AuditTrace, a
// merged trace's ties across lines (slots, ids, generation before
// receipt).
//
// Invariants:
//   - time_s is seconds since the network's system start, so the traces of
//     several nodes of one network share a clock and merge by time.
//   - Writing never blocks the node: events queue up to a bound, and what
//     does not fit is dropped and counted (Dropped), never waited for.
//   - Every line is one complete event; Close writes what is queued.
//   - A node's events are written in the order of their times: an event is
//     stamped and queued in one step.
//
// This package must never import the node's parts: they hand it plain
// values (ids as hex, sizes in bytes, peer names as strings).
package simtrace

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Event is one trace event's message: one of this package's event types.
type Event interface{ eventType() string }

// line is one line of the trace.
type line struct {
	Time    float64
	Message Event
}

// MarshalJSON writes the line with the message's type as its first field.
func (l line) MarshalJSON() ([]byte, error) {
	fields, err := json.Marshal(l.Message)
	if err != nil {
		return nil, err
	}
	typ, _ := json.Marshal(l.Message.eventType())
	msg := append([]byte(`{"type":`), typ...)
	if len(fields) > 2 { // more than {}
		msg = append(append(msg, ','), fields[1:]...)
	} else {
		msg = append(msg, '}')
	}
	return json.Marshal(struct {
		Time    float64         `json:"time_s"`
		Message json.RawMessage `json:"message"`
	}{l.Time, msg})
}

// Writer writes events to a file from a goroutine of its own (Run).
type Writer struct {
	node    string // this node's name in the events
	start   time.Time
	now     func() time.Time
	mu      sync.Mutex // stamps and queues an event in one step
	queue   chan line
	out     *bufio.Writer
	file    io.Closer
	dropped atomic.Uint64
}

// queueLength bounds the events waiting for Run: at a few hundred events a
// second, seconds of a stalled disk.
const queueLength = 8192

// Create opens path for the trace of the node named node (its peer ID),
// whose clock starts at systemStart; now stamps the events (nil: time.Now).
func Create(path, node string, systemStart time.Time, now func() time.Time) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("trace file: %w", err)
	}
	return newWriter(f, f, node, systemStart, now), nil
}

func newWriter(w io.Writer, c io.Closer, node string, systemStart time.Time, now func() time.Time) *Writer {
	if now == nil {
		now = time.Now
	}
	return &Writer{node: node, start: systemStart, now: now, queue: make(chan line, queueLength), out: bufio.NewWriter(w), file: c}
}

// Node is this node's name in the events: producer, sender, recipient.
func (w *Writer) Node() string {
	if w == nil {
		return ""
	}
	return w.node
}

// On reports whether events are written: callers skip building them
// otherwise.
func (w *Writer) On() bool { return w != nil }

// Emit queues e stamped with the time now; it never blocks. A nil Writer
// emits nothing, so a node without a trace calls it all the same.
func (w *Writer) Emit(e Event) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.queue <- line{Time: w.now().Sub(w.start).Seconds(), Message: e}:
	default:
		w.dropped.Add(1)
	}
}

// Dropped is the number of events dropped because the queue was full.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// Run writes queued events until ctx ends, then what is still queued,
// and closes the file.
func (w *Writer) Run(ctx context.Context) error {
	enc := json.NewEncoder(w.out)
	write := func(l line) error {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("trace: %w", err)
		}
		return nil
	}
	tick := time.NewTicker(time.Second) // a trace read while the node runs is at most a second behind
	defer tick.Stop()
	var err error
	for err == nil {
		select {
		case l := <-w.queue:
			err = write(l)
		case <-tick.C:
			err = w.out.Flush()
		case <-ctx.Done():
			for len(w.queue) > 0 && err == nil {
				err = write(<-w.queue)
			}
			return errors.Join(err, w.out.Flush(), w.file.Close())
		}
	}
	return errors.Join(err, w.file.Close())
}
