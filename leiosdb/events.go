package leiosdb

import (
	"fmt"
	"sync"

	"github.com/leiosnode/leiosnode/block"
)

// EventKind says what became true of a point.
type EventKind uint8

const (
	// BodyStored: the point holds its EB body (notify may send a block offer).
	BodyStored EventKind = iota + 1
	// ClosureComplete: the point holds its body and every tx of its closure
	// (notify may send a block-txs offer).
	ClosureComplete
)

func (k EventKind) String() string {
	switch k {
	case BodyStored:
		return "BodyStored"
	case ClosureComplete:
		return "ClosureComplete"
	default:
		return fmt.Sprintf("EventKind(%d)", uint8(k))
	}
}

// Event is sent to subscribers after the batch that made it true is
// committed. Each kind is sent once per point, when it first becomes true:
// on the body's insert for every point already announced, or on the
// announcement of a point whose body is already held; BodyStored always
// precedes ClosureComplete. A point dropped by GC and announced again
// starts over.
type Event struct {
	Kind  EventKind
	Point block.Point
}

func (e Event) String() string { return e.Kind.String() + "(" + e.Point.String() + ")" }

// Subscribe returns a channel of events and a function that ends the
// subscription and closes the channel.
//
// Writers never wait for a subscriber: events are sent without blocking, and
// a subscriber whose buffer (Options.EventBuffer) is full is cut off: its
// channel is closed after the events already buffered. A subscriber that
// sees its channel closed without having cancelled it has missed events; it
// can subscribe again and catch up with PointInfo. Close closes every
// subscription.
func (db *DB) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, db.opts.EventBuffer)
	db.subs.mu.Lock()
	defer db.subs.mu.Unlock()
	if db.subs.closed {
		close(ch)
		return ch, func() {}
	}
	if db.subs.chans == nil {
		db.subs.chans = make(map[chan Event]struct{})
	}
	db.subs.chans[ch] = struct{}{}
	return ch, func() { db.subs.remove(ch) }
}

// subscribers fans events out. mu guards both fields; sends happen under mu
// but never block.
type subscribers struct {
	mu     sync.Mutex
	chans  map[chan Event]struct{}
	closed bool
}

func (s *subscribers) remove(ch chan Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.chans[ch]; ok {
		delete(s.chans, ch)
		close(ch)
	}
}

// publish sends events to every subscriber and returns how many
// subscribers it cut off.
func (s *subscribers) publish(events []Event) int {
	if len(events) == 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lagged := 0
	for ch := range s.chans {
		for _, e := range events {
			select {
			case ch <- e:
				continue
			default:
			}
			delete(s.chans, ch)
			close(ch)
			lagged++
			break
		}
	}
	return lagged
}

func (s *subscribers) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.chans {
		close(ch)
	}
	s.chans = nil
	s.closed = true
}

// publish is called by writers, with writeMu held, after their commit.
func (db *DB) publish(events []Event) {
	if n := db.subs.publish(events); n > 0 {
		db.log.Warn("subscribers cut off: event buffer full", "count", n)
	}
}
