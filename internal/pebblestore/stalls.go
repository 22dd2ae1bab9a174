package pebblestore

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stallClock times the write stalls Pebble reports: the spans in which it
// held every write back, its memtables or level 0 too full to take more.
// A store sized for its writes never stalls; one that does makes its
// writers — the Leios pipeline's, the chain's — wait.
type stallClock struct {
	mu    sync.Mutex
	since time.Time // the current stall's start; zero when none
	count uint64
	total time.Duration
}

func (c *stallClock) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		c.since = time.Now()
		c.count++
	}
}

func (c *stallClock) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.since.IsZero() {
		c.total += time.Since(c.since)
		c.since = time.Time{}
	}
}

// WriteStalls returns how many times Pebble stalled the store's writes
// since it opened, and for how long in all (a stall in progress counted to
// now).
func (s *DB) WriteStalls() (count uint64, total time.Duration) {
	c := &s.stalls
	c.mu.Lock()
	defer c.mu.Unlock()
	total = c.total
	if !c.since.IsZero() {
		total += time.Since(c.since)
	}
	return c.count, total
}

// StallCollectors export WriteStalls, labelled store: each store registers
// its own, the two under the same names, so a dashboard sums or splits them.
func (s *DB) StallCollectors(store string) []prometheus.Collector {
	labels := prometheus.Labels{"store": store}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "leiosnode", Name: "store_write_stalls_total", ConstLabels: labels,
			Help: "Times Pebble held back every write of the store, its memtables or level 0 too full."},
			func() float64 { n, _ := s.WriteStalls(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "leiosnode", Name: "store_write_stall_seconds_total", ConstLabels: labels,
			Help: "Time Pebble held back every write of the store."},
			func() float64 { _, d := s.WriteStalls(); return d.Seconds() }),
	}
}
