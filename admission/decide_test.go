package admission

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// calm are the figures of a node that keeps up: every test below moves one
// of them past its bound.
func calm() Figures {
	return Figures{
		Now: now, ClockSlot: 1000, TipSlot: 995,
		OldestAdmitted: now.Add(-2 * time.Second),
		MempoolBytes:   1 << 20, MempoolCapacity: 24 << 20,
	}
}

// Every shedding decision, fed the lag figures: which path is refused for
// what, and the retry it is told.
func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name        string
		change      func(*Figures)
		local, peer Reason
		retry       time.Duration // of the local refusal
		detail      string        // in the local refusal's detail
	}{
		{"keeping up", func(*Figures) {}, Admit, Admit, 0, ""},
		{"empty mempool", func(f *Figures) { f.OldestAdmitted = time.Time{}; f.MempoolBytes = 0 }, Admit, Admit, 0, ""},
		{"tip at the bound of sync lag", func(f *Figures) { f.TipSlot = f.ClockSlot - DefaultSyncLagSlots }, Admit, Admit, 0, ""},
		{"syncing", func(f *Figures) { f.TipSlot = f.ClockSlot - DefaultSyncLagSlots - 1 }, Syncing, Syncing, DefaultSyncRetryAfter, "101 slots behind"},
		{"tip ahead of the clock", func(f *Figures) { f.TipSlot = f.ClockSlot + 3 }, Admit, Admit, 0, ""},
		{"one missed window", func(f *Figures) { f.MissedInARow = 1 }, Admit, Admit, 0, ""},
		{"two missed windows", func(f *Figures) { f.MissedInARow = 2 }, LeiosBehind, Admit, DefaultRetryAfter, "last 2 EBs"},
		{"queue delay at the bound", func(f *Figures) { f.OldestAdmitted = now.Add(-DefaultMaxQueueDelay) }, Admit, Admit, 0, ""},
		{"queue delay past the bound", func(f *Figures) { f.OldestAdmitted = now.Add(-DefaultMaxQueueDelay - time.Millisecond) }, QueueDelay, Admit, DefaultRetryAfter, "waited 10.0 s"},
		{"mempool at high water", func(f *Figures) { f.MempoolBytes = f.MempoolCapacity*9/10 + 1 }, MempoolFull, MempoolFull, DefaultRetryAfter, "holds"},
		{"syncing comes first", func(f *Figures) {
			f.TipSlot, f.MissedInARow, f.OldestAdmitted = 0, 5, now.Add(-time.Hour)
		}, Syncing, Syncing, DefaultSyncRetryAfter, ""},
		{"missed windows before queue delay", func(f *Figures) { f.MissedInARow, f.OldestAdmitted = 3, now.Add(-time.Hour) }, LeiosBehind, Admit, DefaultRetryAfter, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := calm()
			tc.change(&f)
			local, peer := Decide(Options{}, f, Local), Decide(Options{}, f, Peers)
			if local.Reason != tc.local || peer.Reason != tc.peer {
				t.Fatalf("local %s (%s), peers %s; want %s, %s", local.Reason, local.Detail, peer.Reason, tc.local, tc.peer)
			}
			if local.RetryAfter != tc.retry {
				t.Errorf("retry after %v, want %v", local.RetryAfter, tc.retry)
			}
			if local.Admits() != (local.Detail == "") || !strings.Contains(local.Detail, tc.detail) {
				t.Errorf("detail %q, want it to say %q", local.Detail, tc.detail)
			}
		})
	}
}

// When several reasons hold, each path is given the first of them in the
// order of Reasons that closes it (a peer's txs are paused for sync and a
// full mempool alone): every pair of reasons, held at once.
func TestDecideWhenReasonsMeet(t *testing.T) {
	hold := map[Reason]func(*Figures){
		Syncing:     func(f *Figures) { f.TipSlot = f.ClockSlot - DefaultSyncLagSlots - 1 },
		MempoolFull: func(f *Figures) { f.MempoolBytes = f.MempoolCapacity },
		LeiosBehind: func(f *Figures) { f.MissedInARow = DefaultMissedDeadlines },
		QueueDelay:  func(f *Figures) { f.OldestAdmitted = now.Add(-2 * DefaultMaxQueueDelay) },
	}
	pausesPeers := map[Reason]bool{Syncing: true, MempoolFull: true}
	reasons := Reasons()
	if len(hold) != len(reasons) {
		t.Fatalf("the test holds %d reasons of %d", len(hold), len(reasons))
	}
	for i, first := range reasons {
		for _, second := range reasons[i+1:] {
			f := calm()
			hold[first](&f)
			hold[second](&f)
			wantPeers := Admit
			if pausesPeers[first] {
				wantPeers = first
			} else if pausesPeers[second] {
				wantPeers = second
			}
			local, peers := Decide(Options{}, f, Local), Decide(Options{}, f, Peers)
			if local.Reason != first || peers.Reason != wantPeers {
				t.Errorf("%s and %s at once: local %s, peers %s; want %s, %s", first, second, local.Reason, peers.Reason, first, wantPeers)
			}
		}
	}
}

// Options move the bounds.
func TestDecideOptions(t *testing.T) {
	o := Options{MaxQueueDelay: 30 * time.Second, MissedDeadlines: 4, SyncLagSlots: 10, HighWater: 0.5}
	f := calm()
	f.OldestAdmitted, f.MissedInARow = now.Add(-20*time.Second), 3
	if d := Decide(o, f, Local); !d.Admits() {
		t.Fatalf("refused within wider bounds: %s", d.Detail)
	}
	f.TipSlot = f.ClockSlot - 11
	if d := Decide(o, f, Local); d.Reason != Syncing {
		t.Fatalf("%s, want syncing past 10 slots", d.Reason)
	}
	f = calm()
	f.MempoolBytes = f.MempoolCapacity / 2
	if d := Decide(o, f, Peers); d.Reason != MempoolFull {
		t.Fatalf("%s, want mempool-full at half", d.Reason)
	}
	// A backlog bound refuses local txs past it, however short their wait;
	// peers' txs are not refused for it.
	o = Options{MaxBacklogTxs: 1000}
	f = calm()
	f.MempoolTxs = 1000
	if d := Decide(o, f, Local); !d.Admits() {
		t.Fatalf("refused at the backlog bound: %s", d.Detail)
	}
	f.MempoolTxs = 1001
	if d := Decide(o, f, Local); d.Reason != QueueDelay || !strings.Contains(d.Detail, "holds 1001 txs, more than the 1000") {
		t.Fatalf("%s (%s), want queue-delay past the backlog bound", d.Reason, d.Detail)
	}
	if d := Decide(o, f, Peers); !d.Admits() {
		t.Fatalf("peers refused for the backlog: %s", d.Detail)
	}
	// So does its bound in bytes, below the mempool's high water: large
	// txs are refused at the edge before the mempool refuses peers.
	o = Options{MaxBacklogBytes: f.MempoolCapacity / 2}
	f = calm()
	f.MempoolBytes = o.MaxBacklogBytes
	if d := Decide(o, f, Local); !d.Admits() {
		t.Fatalf("refused at the backlog's bytes: %s", d.Detail)
	}
	f.MempoolBytes++
	if d := Decide(o, f, Local); d.Reason != QueueDelay || !strings.Contains(d.Detail, fmt.Sprintf("holds %d bytes of txs, more than the %d", f.MempoolBytes, o.MaxBacklogBytes)) {
		t.Fatalf("%s (%s), want queue-delay past the backlog's bytes", d.Reason, d.Detail)
	}
	if d := Decide(o, f, Peers); !d.Admits() {
		t.Fatalf("peers refused for the backlog's bytes: %s", d.Detail)
	}
	// The oldest tx's long wait refuses only while the mempool holds more
	// than the next EBs take, in txs or in bytes: what is held then all
	// rides in those, a new tx with the oldest.
	o = Options{MaxQueueDelay: 30 * time.Second, NextEBsTxs: 100, NextEBsBytes: 10_000}
	for _, tc := range []struct {
		txs, bytes int
		want       Reason
	}{{100, 10_000, Admit}, {101, 10_000, QueueDelay}, {100, 10_001, QueueDelay}, {0, 0, Admit}} {
		f = calm()
		f.OldestAdmitted, f.MempoolTxs, f.MempoolBytes = now.Add(-time.Minute), tc.txs, tc.bytes
		if d := Decide(o, f, Local); d.Reason != tc.want {
			t.Errorf("the oldest waited a minute, %d txs of %d bytes held: %s, want %s", tc.txs, tc.bytes, d.Reason, tc.want)
		}
	}
}
