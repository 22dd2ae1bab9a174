package forge

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/internal/metricstest"
)

// The forger registers its counts on the registry it is handed, and a
// forged block counts.
func TestMetricsCountForgedBlocks(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, false, 0, func(o *Options) { o.Registerer = reg })
	got := metricstest.Values(t, reg)
	if len(got) != 2 || got["leiosnode_blocks_forged_total"] != 0 {
		t.Fatalf("before forging: %v", got)
	}
	if _, ok := got["leiosnode_certificates_built_total"]; !ok {
		t.Fatalf("no certificates_built_total: %v", got)
	}
	if blk, err := f.forger.ForgeSlot(1); err != nil || blk == nil {
		t.Fatalf("forge: %v %v", blk, err)
	}
	if got := metricstest.Values(t, reg)["leiosnode_blocks_forged_total"]; got != 1 {
		t.Fatalf("%v blocks forged, want 1", got)
	}
}
