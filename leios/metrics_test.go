package leios

import (
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/internal/metricstest"
)

// The pipeline registers its figures, its EB log's and its LeiosDB's on
// the registry it is handed, and a fetch moves them.
func TestMetricsFollowAFetch(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, func(o *Options) { o.Registerer = reg })
	names := slices.Sorted(maps.Keys(metricstest.Values(t, reg)))
	want := []string{
		"leiosnode_certificates_verified_total",
		"leiosnode_eb_certified_total",
		"leiosnode_eb_diffusion_seconds",
		"leiosnode_eb_txs_from_mempool_total",
		"leiosnode_equivocations_total",
		"leiosnode_leios_certified_closures_missing",
		"leiosnode_leios_certified_closures_missing_since_timestamp_seconds",
		"leiosnode_leios_closures_complete_total",
		"leiosnode_leios_fetched_bytes_total",
		"leiosnode_leios_requests_in_flight",
		`leiosnode_store_compacted_bytes_total{store="leiosdb"}`,
		`leiosnode_store_flushed_bytes_total{store="leiosdb"}`,
		`leiosnode_store_wal_bytes_total{store="leiosdb"}`,
		`leiosnode_store_write_stall_seconds_total{store="leiosdb"}`,
		`leiosnode_store_write_stalls_total{store="leiosdb"}`,
		"leiosnode_votes_cast_total",
		"leiosnode_votes_delivered_total",
		"leiosnode_votes_invalid_total",
		"leiosnode_votes_received_total",
		"leiosnode_votes_relayed_total",
		"leiosnode_votes_repeated_total",
		"leiosnode_votes_shed_total",
		"leiosnode_votes_verified_total",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("registered\n%q\nwant\n%q", names, want)
	}

	h.peerUp(peerA)
	eb := blocktest.NewEB(t, 1000, blocktest.Seeds(0, 10)...)
	p := h.announce(10, eb)
	h.offerBody(peerA, p)
	reqs := h.plan()
	if len(reqs) != 1 {
		t.Fatalf("want one body request, got %v", reqs)
	}
	if got := metricstest.Values(t, reg)["leiosnode_leios_requests_in_flight"]; got != 1 {
		t.Fatalf("%v requests in flight, want 1", got)
	}
	h.reply(reqs[0])
	got := metricstest.Values(t, reg)
	if got["leiosnode_leios_requests_in_flight"] != 0 || got["leiosnode_leios_fetched_bytes_total"] != float64(eb.Body.Size()) {
		t.Fatalf("after the body: %v requests in flight, %v bytes fetched; want 0 and %d",
			got["leiosnode_leios_requests_in_flight"], got["leiosnode_leios_fetched_bytes_total"], eb.Body.Size())
	}
}
