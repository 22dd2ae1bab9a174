package mempool

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics exports the txs held and the syncs done. A scrape takes
// no lock: it reads the latest snapshot and the counters' atomics, as
// Snapshot and Stats do.
func (m *Mempool) registerMetrics(reg prometheus.Registerer) error {
	gauge := func(name, help string, value func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "leiosnode", Name: name, Help: help}, value)
	}
	counter := func(name, help string, value func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "leiosnode", Name: name, Help: help}, value)
	}
	for _, c := range []prometheus.Collector{
		gauge("mempool_txs", "Txs in the mempool.", func() float64 { return float64(m.Snapshot().Len()) }),
		gauge("mempool_bytes", "Bytes of the txs in the mempool.", func() float64 { return float64(m.Snapshot().Bytes()) }),
		counter("mempool_syncs_extension_total", "Mempool syncs on a chain extension: the txs carried over, the block's spends dropped.",
			func() float64 { return float64(m.counters.syncsExtension.Load()) }),
		counter("mempool_syncs_full_total", "Mempool syncs that revalidated every tx held (after a rollback).",
			func() float64 { return float64(m.counters.syncsFull.Load()) }),
		counter("mempool_awaited_total", "Txs admitted once the inputs they had lacked came: their parent admitted after them, or on chain.",
			func() float64 { return float64(m.counters.awaited.Load()) }),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("mempool: metrics: %w", err)
		}
	}
	return nil
}
