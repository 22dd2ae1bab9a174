package sync

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// nodeMetrics are the figures of a node's /metrics the hoarders phase
// reads.
type nodeMetrics struct {
	heapInuse        float64 // go_memstats_heap_inuse_bytes
	nextGC           float64 // go_memstats_next_gc_bytes: the collector's goal
	gogcPercent      float64 // go_gc_gogc_percent
	rss              float64 // process_resident_memory_bytes
	servedBlockFetch float64 // leiosnode_network_served_streams{protocol="blockfetch"}
}

// metrics reads the node's /metrics once.
func (p *nodeProcess) metrics(ctx context.Context, client *http.Client) (*nodeMetrics, error) {
	var families map[string]*dto.MetricFamily
	err := p.get(ctx, client, "/metrics", func(body io.Reader) error {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		var err error
		families, err = parser.TextToMetricFamilies(body)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: /metrics: %w", p.name, err)
	}
	m := &nodeMetrics{}
	for _, f := range []struct {
		name  string
		label string // "" or name=value the sample must carry
		into  *float64
	}{
		{"go_memstats_heap_inuse_bytes", "", &m.heapInuse},
		{"go_memstats_next_gc_bytes", "", &m.nextGC},
		{"go_gc_gogc_percent", "", &m.gogcPercent},
		{"process_resident_memory_bytes", "", &m.rss},
		{"leiosnode_network_served_streams", "protocol=blockfetch", &m.servedBlockFetch},
	} {
		family, ok := families[f.name]
		if !ok {
			if f.label != "" {
				continue // a vector shows no sample until it has one
			}
			return nil, fmt.Errorf("%s: /metrics has no %s", p.name, f.name)
		}
		for _, sample := range family.GetMetric() {
			if f.label == "" || hasLabel(sample, f.label) {
				*f.into += sample.GetGauge().GetValue()
			}
		}
	}
	return m, nil
}

func hasLabel(m *dto.Metric, nameValue string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName()+"="+l.GetValue() == nameValue {
			return true
		}
	}
	return false
}
