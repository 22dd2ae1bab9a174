package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// /metrics serves the registry the API is handed: what the node's parts
// registered on it beside the API's own, and nothing the API declares for
// them (a part's metric registered twice would fail New).
func TestMetricsServeTheRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	part := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "leiosnode", Name: "tip_slot", Help: "Slot of the selected tip."})
	reg.MustRegister(part)
	part.Set(42)
	s, err := New(Options{MaxTxSize: 16384, Registry: reg})
	if err != nil {
		t.Fatalf("the API declares a metric a part owns: %v", err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	for _, line := range []string{
		"leiosnode_tip_slot 42",
		"# TYPE leiosnode_submit_to_chain_seconds histogram",
		`leiosnode_api_requests_in_flight{pool="requests"}`,
	} {
		if !strings.Contains(rec.Body.String(), line) {
			t.Errorf("/metrics has no %q", line)
		}
	}
}
