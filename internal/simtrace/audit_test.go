package simtrace

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// traceOf writes events as a Writer does, each a millisecond after the
// last, and returns the trace.
func traceOf(t *testing.T, events ...Event) []byte {
	t.Helper()
	start := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	at := start
	var out bytes.Buffer
	w := newWriter(&out, io.NopCloser(nil), "node-0", start, func() time.Time { at = at.Add(time.Millisecond); return at })
	for _, e := range events {
		w.Emit(e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestAuditPassesATraceItsReadersCanTie: every event of the node's kinds,
// each generated item before its sends and receipts, the EB named as its
// RB, the vote on that EB.
func TestAuditPassesATraceItsReadersCanTie(t *testing.T) {
	a, err := AuditTrace(bytes.NewReader(traceOf(t, every...)))
	if err != nil || len(a.Problems) > 0 || a.Lines != len(every) {
		t.Fatalf("%d lines, problems %q, %v", a.Lines, a.Problems, err)
	}
	if a.Counts["VTBundleSent"] != 1 || a.Counts["Slot"] != 2 {
		t.Errorf("counts %v", a.Counts)
	}
}

// TestAuditFindsWhatMisleadsTheReaders: each problem the readers would
// trip on, one trace each, named with its cause.
func TestAuditFindsWhatMisleadsTheReaders(t *testing.T) {
	rb := RBGenerated{ID: "aa", Slot: 7, Producer: "node-0"}
	eb := EBGenerated{ID: "aa", Slot: 7, Producer: "node-0"}
	for _, tc := range []struct {
		name   string
		events []Event
		want   string
	}{
		{"a slot skipped", []Event{Slot{Node: "node-0", Slot: 7}, Slot{Node: "node-0", Slot: 9}}, "node-0: Slot 9 after Slot 7"},
		{"sent before generated", []Event{Sent{Kind: "RB", Sender: "node-0", Recipient: "node-1", ID: "aa", Slot: 7}, rb},
			"RB aa: RBSent at 0.001 s before its RBGenerated"},
		{"received before generated", []Event{rb, eb, Received{Kind: "VTBundle", Recipient: "node-1", ID: "aa-0", Slot: 7},
			VTBundleGenerated{ID: "aa-0", Slot: 8, Producer: "node-0", Votes: map[string]int{"aa": 1}}},
			"VTBundle aa-0: VTBundleReceived at 0.003 s before its VTBundleGenerated"},
		{"an EB not named as its RB", []Event{rb, EBGenerated{ID: "ee", Slot: 7, Producer: "node-0"}},
			"EBGenerated ee at 0.002 s: no RBGenerated of that id before it"},
		{"a vote before its EB", []Event{rb, VTBundleGenerated{ID: "aa-0", Slot: 8, Producer: "node-1", Votes: map[string]int{"aa": 1}}, eb},
			"a vote on aa, no EBGenerated before it"},
		{"an endorsement of an EB never generated", []Event{rb, RBGenerated{ID: "ab", Slot: 9, Producer: "node-0", Endorsement: &Endorsement{EB: BlockRef{ID: "ee"}}}},
			"RBGenerated ab at 0.002 s: endorses ee"},
	} {
		a, err := AuditTrace(bytes.NewReader(traceOf(t, tc.events...)))
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Problems) != 1 || !strings.Contains(a.Problems[0], tc.want) {
			t.Errorf("%s: problems %q, want one with %q", tc.name, a.Problems, tc.want)
		}
	}
}
