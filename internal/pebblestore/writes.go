package pebblestore

import (
	"github.com/prometheus/client_golang/prometheus"
)

// writeCollector exports, from Pebble's own metrics, the bytes a store
// wrote: to its write-ahead log (what its writers handed it), to tables by
// flushes, and to tables by compactions. Their sum over the log's bytes
// is the store's write amplification; a dashboard divides the rates.
type writeCollector struct {
	db                   *DB
	wal, flush, compacts *prometheus.Desc
}

// WriteCollectors export the bytes the store wrote (writeCollector),
// labelled store as StallCollectors are.
func (s *DB) WriteCollectors(store string) []prometheus.Collector {
	labels := prometheus.Labels{"store": store}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("leiosnode", "store", name), help, nil, labels)
	}
	return []prometheus.Collector{writeCollector{
		db:       s,
		wal:      desc("wal_bytes_total", "Bytes Pebble wrote to the store's write-ahead log: what its writers handed it."),
		flush:    desc("flushed_bytes_total", "Bytes Pebble wrote to the store's tables by flushing memtables."),
		compacts: desc("compacted_bytes_total", "Bytes Pebble wrote to the store's tables by compactions."),
	}}
}

func (c writeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.wal
	ch <- c.flush
	ch <- c.compacts
}

func (c writeCollector) Collect(ch chan<- prometheus.Metric) {
	c.db.mu.Lock()
	closed := c.db.closed
	c.db.mu.Unlock()
	if closed {
		return // a scrape racing the node's shutdown
	}
	m := c.db.Metrics()
	var flushed, compacted uint64
	for _, l := range m.Levels {
		flushed += l.TableBytesFlushed
		compacted += l.TableBytesCompacted
	}
	ch <- prometheus.MustNewConstMetric(c.wal, prometheus.CounterValue, float64(m.WAL.BytesWritten))
	ch <- prometheus.MustNewConstMetric(c.flush, prometheus.CounterValue, float64(flushed))
	ch <- prometheus.MustNewConstMetric(c.compacts, prometheus.CounterValue, float64(compacted))
}
