package node

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/consensustest"
	"github.com/leiosnode/leiosnode/internal/simtrace"
)

// TestTraceSlotsWritesEverySlotAfterALateWakeUp: a slot loop woken three
// slots late (the process descheduled) writes the Slot event of each slot
// it passed, in order, since the trace verifier counts Slot events to know
// the slot.
func TestTraceSlotsWritesEverySlotAfterALateWakeUp(t *testing.T) {
	g := consensustest.Genesis(consensustest.NewPool("pool", 0))
	g.SlotLengthMs = 100
	v, err := consensus.NewValidator(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := v.Clock()
	// Mid-slot 10 at the first look, mid-slot 14 from the next on.
	var looks atomic.Int32
	now := func() time.Time {
		if looks.Add(1) == 1 {
			return clock.SlotStart(10).Add(50 * time.Millisecond)
		}
		return clock.SlotStart(14).Add(50 * time.Millisecond)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	w, err := simtrace.Create(path, "node-0", g.SystemStart, now)
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{parts: parts{validator: v, now: now, trace: w}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.traceSlots(ctx) }()
	// The loop has written what it caught up on once it looks at the time
	// a fourth time, to wait for slot 15.
	for looks.Load() < 4 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil { // ctx ended: writes what is queued
		t.Fatal(err)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var slots []uint64
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var l struct{ Message simtrace.Slot }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		slots = append(slots, l.Message.Slot)
	}
	if want := []uint64{11, 12, 13, 14}; !slices.Equal(slots, want) {
		t.Errorf("Slot events %v, want %v", slots, want)
	}
}
