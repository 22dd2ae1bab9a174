package admission

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// A gate serves the decision of its last Update, counts the refusals it
// hands out, and wakes a waiting tx submission when it opens again.
func TestGate(t *testing.T) {
	f := calm()
	reg := prometheus.NewRegistry()
	g, err := NewGate(Options{}, func() Figures { return f }, reg)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Admit(Local).Admits() {
		t.Fatal("a new gate refuses")
	}
	f.OldestAdmitted = now.Add(-time.Minute)
	g.Update()
	for range 3 {
		if d := g.Admit(Local); d.Reason != QueueDelay || d.RetryAfter != DefaultRetryAfter {
			t.Fatalf("%+v, want a queue-delay refusal", d)
		}
	}
	if !g.Admit(Peers).Admits() {
		t.Fatal("peers refused for the queue delay")
	}
	if n := counted(t, reg, "api", "queue-delay"); n != 3 {
		t.Fatalf("%v refusals counted, want 3", n)
	}

	f.MempoolBytes = f.MempoolCapacity
	g.Update()
	waited := make(chan error)
	go func() { waited <- g.Wait(context.Background(), Peers) }()
	// The wait counts its refusal once it has read the decision; then the
	// gate opens.
	for g.Stats().Refused["txsubmission"]["mempool-full"] == 0 {
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-waited:
		t.Fatalf("the wait returned while the mempool is full: %v", err)
	default:
	}
	f.MempoolBytes = 0
	g.Update()
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if s := g.Stats(); s.Paused <= 0 || !s.Decisions["txsubmission"].Admits() || s.Decisions["api"].Reason != QueueDelay {
		t.Fatalf("stats %+v", s)
	}
}

// A wait ends with its context, saying why it was refused.
func TestGateWaitCancelled(t *testing.T) {
	f := calm()
	f.TipSlot = 0
	g, err := NewGate(Options{}, func() Figures { return f }, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.Update()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(ctx, Peers); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want cancelled", err)
	}
}

// counted reads leiosnode_txs_refused_total{path, reason} from reg.
func counted(t *testing.T, reg *prometheus.Registry, path, reason string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "leiosnode_txs_refused_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["path"] == path && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
