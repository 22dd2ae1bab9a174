package leiosdb

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/internal/metricstest"
)

// The store registers its write stalls and the bytes Pebble wrote for it,
// labelled leiosdb, on the registry it is handed (pebblestore's tests make
// them move); CheckOpen registers nothing.
func TestMetricsRegistered(t *testing.T) {
	dir := t.TempDir()
	reg := prometheus.NewRegistry()
	if err := CheckOpen(dir, Options{Registerer: reg, Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	db, err := Open(dir, Options{Registerer: reg, Logger: quietLogger(), CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := metricstest.Values(t, reg)
	for _, name := range []string{`leiosnode_store_write_stalls_total{store="leiosdb"}`, `leiosnode_store_write_stall_seconds_total{store="leiosdb"}`} {
		if v, ok := got[name]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", name, v, ok)
		}
	}
	for _, name := range []string{"wal", "flushed", "compacted"} {
		if _, ok := got[`leiosnode_store_`+name+`_bytes_total{store="leiosdb"}`]; !ok {
			t.Errorf("no %s bytes in %v", name, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("gathered %v, want the two stall series and the three of bytes written", got)
	}
}
