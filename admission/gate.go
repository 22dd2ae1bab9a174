package admission

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Gate serves the latest decision for each path. Run re-decides every
// Options.Interval from the figures; Admit and Wait read the result.
type Gate struct {
	opts    Options
	figures func() Figures

	// decisions holds the latest Decision per path; written by Update,
	// read by anyone without a lock.
	decisions [numPaths]atomic.Pointer[Decision]
	// opened is closed (and replaced) by Update when a path that refused
	// admits again, waking the Waits.
	opened atomic.Pointer[chan struct{}]

	refused    [numPaths][numReasons]atomic.Uint64
	pausedNs   atomic.Int64 // time Waits spent waiting
	refusedVec *prometheus.CounterVec
	pausedCtr  prometheus.Counter
}

// NewGate returns a gate deciding from figures, which must be cheap and
// safe to call from the gate's loop. It admits until the first Update.
// Its metrics go to reg, if set.
func NewGate(opts Options, figures func() Figures, reg prometheus.Registerer) (*Gate, error) {
	g := &Gate{
		opts:    opts.withDefaults(),
		figures: figures,
		refusedVec: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "leiosnode", Name: "txs_refused_total",
			Help: "Txs refused at the node's edge (path api), and pauses of tx submission from peers (path txsubmission), by reason.",
		}, []string{"path", "reason"}),
		pausedCtr: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "leiosnode", Name: "txsubmission_paused_seconds_total",
			Help: "Time tx submission from peers waited for the node to take txs in again.",
		}),
	}
	for p := range numPaths {
		g.decisions[p].Store(&Decision{})
	}
	opened := make(chan struct{})
	g.opened.Store(&opened)
	if reg != nil {
		for _, c := range []prometheus.Collector{g.refusedVec, g.pausedCtr} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("admission: metrics: %w", err)
			}
		}
	}
	return g, nil
}

// Run re-decides every Options.Interval until ctx ends.
func (g *Gate) Run(ctx context.Context) error {
	ticker := time.NewTicker(g.opts.Interval)
	defer ticker.Stop()
	for {
		g.Update()
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Update decides anew from the figures now.
func (g *Gate) Update() {
	f := g.figures()
	reopened := false
	for p := range numPaths {
		d := Decide(g.opts, f, p)
		if prev := g.decisions[p].Swap(&d); !prev.Admits() && d.Admits() {
			reopened = true
		}
	}
	if reopened {
		fresh := make(chan struct{})
		close(*g.opened.Swap(&fresh))
	}
}

// Admit returns the latest decision for path, and counts it if it
// refuses: the caller refuses the tx. It never blocks.
func (g *Gate) Admit(path Path) Decision {
	d := *g.decisions[path].Load()
	if !d.Admits() {
		g.refused[path][d.Reason].Add(1)
		g.refusedVec.WithLabelValues(path.String(), d.Reason.String()).Inc()
	}
	return d
}

// Wait returns once path admits, or with ctx's error when it ends first:
// tx submission's backpressure, which asks peers for nothing meanwhile. A
// wait is counted as one refusal, and its time as paused.
func (g *Gate) Wait(ctx context.Context, path Path) error {
	opened := *g.opened.Load() // before the decision, so no reopening is missed
	d := g.Admit(path)
	if d.Admits() {
		return nil
	}
	start := time.Now()
	defer func() {
		paused := time.Since(start)
		g.pausedNs.Add(int64(paused))
		g.pausedCtr.Add(paused.Seconds())
	}()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("admission: %s refused (%s): %w", path, d.Reason, ctx.Err())
		case <-opened:
		}
		opened = *g.opened.Load()
		if d = *g.decisions[path].Load(); d.Admits() {
			return nil
		}
	}
}

// Stats are a gate's latest decisions and its counts since NewGate.
type Stats struct {
	// Decisions is the latest decision per path name ("api",
	// "txsubmission").
	Decisions map[string]Decision
	// Refused counts refusals per path name and reason name.
	Refused map[string]map[string]uint64
	// Paused is the time tx submission waited for the edge to open.
	Paused time.Duration
}

// Stats returns the gate's decisions and counts.
func (g *Gate) Stats() Stats {
	s := Stats{Decisions: map[string]Decision{}, Refused: map[string]map[string]uint64{}, Paused: time.Duration(g.pausedNs.Load())}
	for p := range numPaths {
		s.Decisions[p.String()] = *g.decisions[p].Load()
		counts := map[string]uint64{}
		for _, r := range Reasons() {
			counts[r.String()] = g.refused[p][r].Load()
		}
		s.Refused[p.String()] = counts
	}
	return s
}
