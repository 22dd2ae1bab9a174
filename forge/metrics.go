package forge

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics exports the blocks forged and the certificates built,
// read from the forger's atomics on scrape.
func (f *Forger) registerMetrics(reg prometheus.Registerer) error {
	counter := func(name, help string, value func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "leiosnode", Name: name, Help: help},
			func() float64 { return float64(value()) })
	}
	for _, c := range []prometheus.Collector{
		counter("blocks_forged_total", "Blocks this node forged.", f.Forged),
		counter("certificates_built_total", "Certificates this node built into CertRBs.", f.Certificates),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("forge: metrics: %w", err)
		}
	}
	return nil
}
