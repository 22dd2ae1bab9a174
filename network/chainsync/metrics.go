package chainsync

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics exports the fork status: the peers found on a deep
// fork, and whether this node is stranded. A scrape takes the fork watch's
// lock once per series, as Forks does.
func (svc *Service) registerMetrics(reg prometheus.Registerer) error {
	for _, c := range forkCollectors(svc.Forks) {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("chainsync: metrics: %w", err)
		}
	}
	return nil
}

func forkCollectors(forks func() ForkStatus) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "leiosnode", Name: "deep_forks_total",
			Help: "Peers found on a chain that forks from this node's deeper than k, each once until its chain joins again.",
		}, func() float64 { return float64(forks().DeepForks) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "leiosnode", Name: "stranded",
			Help: "1 when every peer's chain forks from this node's deeper than k: its chain cannot join theirs.",
		}, func() float64 {
			if forks().Stranded {
				return 1
			}
			return 0
		}),
	}
}
