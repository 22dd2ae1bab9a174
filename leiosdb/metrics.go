package leiosdb

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics exports the store's write stalls, read on scrape from
// the stall clock's own lock, and the bytes Pebble wrote for it, from
// Pebble's metrics: never closeMu, so a scrape waits on no reader or
// writer of the store.
func (db *DB) registerMetrics(reg prometheus.Registerer) error {
	for _, c := range append(db.store.StallCollectors("leiosdb"), db.store.WriteCollectors("leiosdb")...) {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("leiosdb: metrics: %w", err)
		}
	}
	return nil
}
