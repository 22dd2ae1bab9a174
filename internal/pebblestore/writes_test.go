package pebblestore

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/internal/metricstest"
)

// The bytes a store writes show in its collectors: its log's as it takes
// them, its tables' once a flush has written them; after Close a scrape
// gives none.
func TestWriteCollectorsCountBytes(t *testing.T) {
	var inits int
	s := mustOpen(t, vfs.NewMem(), devnet, &inits)
	reg := prometheus.NewRegistry()
	for _, c := range s.WriteCollectors("teststore") {
		reg.MustRegister(c)
	}
	const (
		wal     = `leiosnode_store_wal_bytes_total{store="teststore"}`
		flushed = `leiosnode_store_flushed_bytes_total{store="teststore"}`
	)
	before := metricstest.Values(t, reg)
	b := s.NewBatch()
	for i := range 1000 {
		_ = b.Set(fmt.Appendf(nil, "key-%04d", i), make([]byte, 100), nil)
	}
	if err := s.Commit(b, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	after := metricstest.Values(t, reg)
	if after[wal]-before[wal] < 100_000 || after[flushed]-before[flushed] <= 0 {
		t.Fatalf("100 kB written and flushed: before %v, after %v", before, after)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := metricstest.Values(t, reg); len(got) != 0 {
		t.Fatalf("a closed store's collectors gave %v", got)
	}
}
