package node

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// registerMetrics registers what the node itself counts — the blocks that
// changed its selection, its error log lines — and the Go runtime's and the
// process's collectors. Its parts register their own on the same registry
// as they are built; the API serves it.
func (n *Node) registerMetrics() error {
	counter := func(name, help string, value func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "leiosnode", Name: name, Help: help},
			func() float64 { return float64(value()) })
	}
	for _, c := range []prometheus.Collector{
		counter("blocks_adopted_total", "Blocks that changed the selected chain when added.", n.adopted.Load),
		counter("errors_total", "Log records at level error.", n.errors.Load),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := n.registry.Register(c); err != nil {
			return fmt.Errorf("node: metrics: %w", err)
		}
	}
	return nil
}
