package sync

import (
	"context"
	"fmt"
	"net/http"
	"time"

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
	select {
	case <-p.exited:
		return nil, fmt.Errorf("%s exited (%v); its log is %s", p.name, p.err, p.logFile)
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.httpAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: GET /metrics: %w", p.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: GET /metrics: %s", p.name, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
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
