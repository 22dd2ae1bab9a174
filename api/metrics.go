package api

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// registerMetrics exports the node's state beside the host's and the
// pipeline's own metrics.
func (s *Server) registerMetrics() error {
	o := s.opts
	var cs []prometheus.Collector
	gauge := func(name, help string, value func() float64) {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "leiosnode", Name: name, Help: help}, value))
	}
	gauge("tip_block_number", "Block number of the selected tip.", func() float64 { return float64(o.Chain.Tip().BlockNumber) })
	gauge("tip_slot", "Slot of the selected tip.", func() float64 { return float64(o.Chain.Tip().Point.Slot) })
	gauge("immutable_tip_block_number", "Block number of the immutable tip.", func() float64 { return float64(o.Chain.ImmutableTip().BlockNumber) })
	gauge("blocks_adopted", "Blocks that changed the selected chain when added.", func() float64 { return float64(o.BlocksAdopted()) })
	gauge("errors", "Log records at level error.", func() float64 { return float64(o.Errors()) })
	gauge("mempool_txs", "Txs in the mempool.", func() float64 { return float64(o.Mempool.Snapshot().Len()) })
	gauge("mempool_bytes", "Bytes of the txs in the mempool.", func() float64 { return float64(o.Mempool.Snapshot().Bytes()) })
	gauge("leios_fetched_bytes", "EB bodies and txs fetched from peers.", func() float64 { return float64(o.Leios.Stats().FetchedBytes) })
	gauge("leios_requests_in_flight", "LeiosFetch requests in flight.", func() float64 { return float64(o.Leios.Stats().RequestsInFlight) })
	gauge("leios_closures_complete", "EB closures completed.", func() float64 { return float64(o.Leios.Stats().ClosuresComplete) })
	gauge("txs_on_chain", "Txs in the selected chain.", func() float64 { return float64(o.TxsOnChain()) })
	if o.Forger != nil {
		gauge("blocks_forged", "Blocks this node forged.", func() float64 { return float64(o.Forger.Forged()) })
	}
	cs = append(cs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range cs {
		if err := o.Registry.Register(c); err != nil {
			return fmt.Errorf("api: metrics: %w", err)
		}
	}
	return nil
}
