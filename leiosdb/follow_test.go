package leiosdb

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
)

// recorder collects what a Follower delivers.
type recorder struct {
	mu   sync.Mutex
	seen map[Event][]Source
}

func (r *recorder) record(ev Followed) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[ev.Event] = append(r.seen[ev.Event], ev.Source)
	return nil
}

func (r *recorder) sources(ev Event) []Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Source(nil), r.seen[ev]...)
}

// TestFollowerLosesNothing: the state held at the start is delivered as
// such, committed events as they come, and after a cut-off for lagging
// (a buffer of one event, two events per commit) the follower catches up:
// every point's BodyStored and ClosureComplete arrive, whatever the lag.
// Announcing a held EB at a second slot commits two events at once, which
// always cuts a one-event buffer off.
func TestFollowerLosesNothing(t *testing.T) {
	db := openTestDB(t, Options{EventBuffer: 1})
	old := testBody(t, [][]byte{blocktest.Tx(1, 100)})
	pOld := pointOf(1, old)
	announceAndStore(t, db, pOld, old)
	if _, err := db.InsertTxs([][]byte{blocktest.Tx(1, 100)}); err != nil {
		t.Fatal(err)
	}

	follower := db.Follow(nil)
	rec := &recorder{seen: map[Event][]Source{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- follower.Run(ctx, rec.record) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	var points []block.Point
	for i := range uint64(8) {
		tx := blocktest.Tx(10+i, 100)
		eb := testBody(t, [][]byte{tx})
		p := pointOf(10+i, eb)
		announceAndStore(t, db, p, eb)
		if _, err := db.InsertTxs([][]byte{tx}); err != nil {
			t.Fatal(err)
		}
		again := pointOf(100+i, eb)
		if err := db.InsertPoint(again, eb.Size()); err != nil {
			t.Fatal(err)
		}
		points = append(points, p, again)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range points {
		for _, kind := range []EventKind{BodyStored, ClosureComplete} {
			for len(rec.sources(Event{kind, p})) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%s of %s never delivered", kind, p)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	caughtUp := false
	for _, p := range points {
		for _, kind := range []EventKind{BodyStored, ClosureComplete} {
			for _, src := range rec.sources(Event{kind, p}) {
				caughtUp = caughtUp || src == CaughtUp
			}
		}
	}
	if !caughtUp {
		t.Fatal("the follower was never cut off: the test proves nothing")
	}
	for _, kind := range []EventKind{BodyStored, ClosureComplete} {
		if got := rec.sources(Event{kind, pOld}); len(got) == 0 || got[0] != HeldAtStart {
			t.Fatalf("%s of the point held at the start delivered as %v", kind, got)
		}
	}
}
