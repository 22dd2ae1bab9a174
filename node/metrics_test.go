package node

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// metricsGolden lists every series a freshly built producer node serves on
// /metrics, with its type and help text: operators' dashboards and
// docs/operations.md name them, so a move or a rename shows here. The Go
// runtime's and the process's are left out (they change with Go's
// release); labelled vectors appear once they have a series.
const metricsGolden = "testdata/metrics.golden"

// TestMetricsServedUnchanged builds a producer node and compares what its
// registry gathers, the registry /metrics serves, with metricsGolden. Run
// with LEIOSNODE_WRITE_GOLDEN=1 to rewrite the file after a deliberate
// change.
func TestMetricsServedUnchanged(t *testing.T) {
	cfg := testNet(t, 1, time.Second)[0]
	n, err := New(cfg, Options{Logger: quietLogger()})
	must(t, err)
	defer n.close()
	families, err := n.registry.Gather()
	must(t, err)
	got := metricLines(families)
	if !slices.ContainsFunc(families, func(f *dto.MetricFamily) bool { return f.GetName() == "go_goroutines" }) {
		t.Error("/metrics has no go_goroutines: the Go runtime's collector is not registered")
	}
	if os.Getenv("LEIOSNODE_WRITE_GOLDEN") != "" {
		must(t, os.WriteFile(metricsGolden, []byte(strings.Join(got, "\n")+"\n"), 0o644))
	}
	data, err := os.ReadFile(metricsGolden)
	must(t, err)
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for _, line := range want {
		if !slices.Contains(got, line) {
			t.Errorf("missing from /metrics: %s", line)
		}
	}
	for _, line := range got {
		if !slices.Contains(want, line) {
			t.Errorf("new in /metrics: %s", line)
		}
	}
}

// metricLines are the series of families, one line each — name, labels,
// type, help — sorted, the Go runtime's and the process's left out.
func metricLines(families []*dto.MetricFamily) []string {
	var lines []string
	for _, f := range families {
		name := f.GetName()
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %s %s", name, strings.Join(labels, ","), strings.ToLower(f.GetType().String()), f.GetHelp()))
		}
	}
	slices.SortFunc(lines, cmp.Compare)
	return slices.Compact(lines)
}
