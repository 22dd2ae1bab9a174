// Package metricstest reads what a Prometheus registry gathers, for the
// tests of the packages that register their metrics on one: each series'
// value by its name and labels, as /metrics would show it.
//
// It is for tests only.
package metricstest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Values gathers g and returns each series' value keyed by its name, with
// its labels in braces when it has any: `name` or `name{k="v",k2="v2"}`,
// labels in Prometheus's order (by name). A counter's or gauge's value is
// its own, a histogram's its sample count, a summary's too.
func Values(t testing.TB, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatalf("gathering the metrics: %v", err)
	}
	values := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			values[Key(f.GetName(), m.GetLabel())] = value(m)
		}
	}
	return values
}

// Key is the key Values files a series under.
func Key(name string, labels []*dto.LabelPair) string {
	if len(labels) == 0 {
		return name
	}
	pairs := make([]string, 0, len(labels))
	for _, l := range labels {
		pairs = append(pairs, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	slices.Sort(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	case m.Summary != nil:
		return float64(m.GetSummary().GetSampleCount())
	default:
		return m.GetUntyped().GetValue()
	}
}
