package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestValuesKeysSeriesByNameAndLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	plain := prometheus.NewCounter(prometheus.CounterOpts{Name: "plain_total", Help: "h"})
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "by_label", Help: "h"}, []string{"b", "a"})
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "seconds", Help: "h"})
	reg.MustRegister(plain, vec, hist)
	plain.Add(2)
	vec.WithLabelValues("x", "y").Set(3)
	hist.Observe(1)
	hist.Observe(2)
	got := Values(t, reg)
	want := map[string]float64{"plain_total": 2, `by_label{a="y",b="x"}`: 3, "seconds": 2}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
