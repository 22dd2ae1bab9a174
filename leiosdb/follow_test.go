package leiosdb

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

// recorder collects what a Follower delivers. With a gate it takes
// nothing until the gate is closed: a follower held there lags for sure.
type recorder struct {
	mu   sync.Mutex
	seen map[Event][]Source
	gate chan struct{}
}

func (r *recorder) record(ev Followed) error {
	if r.gate != nil {
		<-r.gate
	}
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
// The follower is held in its first delivery while the commits come, so
// its one-event buffer overflows: a follower quick enough to drain it
// between two events proved nothing.
func TestFollowerLosesNothing(t *testing.T) {
	db := openTestDB(t, Options{EventBuffer: 1})
	old := testBody(t, [][]byte{blocktest.Tx(1, 100)})
	pOld := pointOf(1, old)
	announceAndStore(t, db, pOld, old)
	if _, err := db.InsertTxs(block.HashTxs([][]byte{blocktest.Tx(1, 100)})); err != nil {
		t.Fatal(err)
	}

	follower := db.Follow(nil)
	gate := make(chan struct{})
	openGate := sync.OnceFunc(func() { close(gate) })
	rec := &recorder{seen: map[Event][]Source{}, gate: gate}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- follower.Run(ctx, rec.record) }()
	defer func() {
		cancel()
		openGate() // a test that failed early left it shut
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
		if _, err := db.InsertTxs(block.HashTxs([][]byte{tx})); err != nil {
			t.Fatal(err)
		}
		again := pointOf(100+i, eb)
		if err := db.InsertPoint(again, eb.Size()); err != nil {
			t.Fatal(err)
		}
		points = append(points, p, again)
	}
	openGate()
	for _, p := range points {
		for _, kind := range []EventKind{BodyStored, ClosureComplete} {
			waittest.Until(t, fmt.Sprintf("%s of %s delivered", kind, p), func() bool { return len(rec.sources(Event{kind, p})) > 0 })
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
