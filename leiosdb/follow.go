package leiosdb

import (
	"context"
	"fmt"
)

// Followed is one event as a Follower delivers it.
type Followed struct {
	Event
	// Info is the point as the store held it when the event was delivered
	// (its size for an offer, its missing count).
	Info PointInfo
	// Source says where the event came from.
	Source Source
}

// Source is where a Followed event came from.
type Source uint8

const (
	// Committed: taken from a commit as it happened.
	Committed Source = iota
	// HeldAtStart: read from the store's state when Run started; it may
	// have become true long before.
	HeldAtStart
	// CaughtUp: read from the store's state after the subscription was cut
	// off for lagging; it became true since the lag began, or is a repeat.
	CaughtUp
)

// Follower is a subscription that loses nothing: it delivers the state the
// store already holds, then every event as it is committed, and when the
// store cuts it off for lagging, it subscribes again and catches up again.
// Events may therefore repeat; each kind still comes for a point only once
// it is true, and BodyStored before ClosureComplete. Every subscriber of the
// LeiosDB uses one.
type Follower struct {
	db       *DB
	fromSlot func() uint64
	events   <-chan Event
	cancel   func()
}

// Follow subscribes at once — so nothing committed after Follow returns is
// missed, even before Run starts — and returns the Follower. fromSlot
// bounds the catch-ups: points below it are not replayed (nil: all).
func (db *DB) Follow(fromSlot func() uint64) *Follower {
	if fromSlot == nil {
		fromSlot = func() uint64 { return 0 }
	}
	events, cancel := db.Subscribe()
	return &Follower{db: db, fromSlot: fromSlot, events: events, cancel: cancel}
}

// Run delivers to fn, in order, until ctx ends: a catch-up (BodyStored for
// every point from fromSlot on whose body is held, ClosureComplete for each
// whose closure is complete, in slot order), then each committed event of a
// point the store still holds. It returns nil when ctx ends, the first
// error of fn, or the store's. Run may be called once.
func (f *Follower) Run(ctx context.Context, fn func(Followed) error) error {
	defer func() { f.cancel() }()
	for source := HeldAtStart; ; source = CaughtUp {
		if err := f.catchUp(source, fn); err != nil {
			return err
		}
		for open := true; open; {
			select {
			case <-ctx.Done():
				return nil
			case ev, ok := <-f.events:
				if !ok {
					open = false
					break
				}
				if err := f.deliver(ev, fn); err != nil {
					return err
				}
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		// Cut off for lagging (or the store closed): subscribe again before
		// reading the state, so the catch-up leaves no gap.
		f.cancel()
		f.events, f.cancel = f.db.Subscribe()
		f.db.log.Warn("LeiosDB subscriber cut off for lagging; catching up")
	}
}

func (f *Follower) catchUp(source Source, fn func(Followed) error) error {
	infos, err := f.db.Points(f.fromSlot())
	if err != nil {
		return fmt.Errorf("leiosdb: catching up: %w", err)
	}
	for _, info := range infos {
		if info.HasBody {
			if err := fn(Followed{Event: Event{BodyStored, info.Point}, Info: info, Source: source}); err != nil {
				return err
			}
		}
		if info.Complete() {
			if err := fn(Followed{Event: Event{ClosureComplete, info.Point}, Info: info, Source: source}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *Follower) deliver(ev Event, fn func(Followed) error) error {
	info, ok, err := f.db.PointInfo(ev.Point)
	if err != nil {
		return fmt.Errorf("leiosdb: point %s: %w", ev.Point, err)
	}
	if !ok || !info.HasBody {
		return nil // collected since: nothing to tell
	}
	return fn(Followed{Event: ev, Info: info})
}
