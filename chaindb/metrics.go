package chaindb

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics exports the selected chain — its tip, its immutable tip,
// the txs and CertRBs on it — and the store's write stalls and the bytes
// Pebble wrote for it. Each is read
// on scrape under mu shared, as Tip and TxsOnChain are.
func (db *DB) registerMetrics(reg prometheus.Registerer) error {
	gauge := func(name, help string, value func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "leiosnode", Name: name, Help: help}, value)
	}
	cs := append([]prometheus.Collector{
		gauge("tip_block_number", "Block number of the selected tip.", func() float64 { return float64(db.Tip().BlockNumber) }),
		gauge("tip_slot", "Slot of the selected tip.", func() float64 { return float64(db.Tip().Point.Slot) }),
		gauge("immutable_tip_block_number", "Block number of the immutable tip.", func() float64 { return float64(db.ImmutableTip().BlockNumber) }),
		gauge("chain_txs", "Txs in the selected chain. A gauge: a rollback lowers it.", func() float64 { return float64(db.TxsOnChain()) }),
		gauge("chain_certified_ebs", "CertRBs in the selected chain: the EBs it certifies. A gauge: a rollback lowers it.", func() float64 { return float64(db.CertRBsOnChain()) }),
	}, append(db.store.StallCollectors("chaindb"), db.store.WriteCollectors("chaindb")...)...)
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("chaindb: metrics: %w", err)
		}
	}
	return nil
}
