package pebblestore

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/internal/metricstest"
)

// A write stall Pebble reports counts in the store's collectors, labelled
// with its name.
func TestStallCollectorsCountStalls(t *testing.T) {
	var inits int
	s := mustOpen(t, vfs.NewMem(), devnet, &inits)
	defer s.Close()
	reg := prometheus.NewRegistry()
	for _, c := range s.StallCollectors("teststore") {
		reg.MustRegister(c)
	}
	const stalls = `leiosnode_store_write_stalls_total{store="teststore"}`
	got := metricstest.Values(t, reg)
	if _, ok := got[`leiosnode_store_write_stall_seconds_total{store="teststore"}`]; !ok || len(got) != 2 || got[stalls] != 0 {
		t.Fatalf("before any stall: %v", got)
	}
	s.stalls.begin() // what Pebble's WriteStallBegin event does
	s.stalls.end()
	if got := metricstest.Values(t, reg); got[stalls] != 1 {
		t.Fatalf("after one stall: %v", got)
	}
}
