package leios

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// pipelineMetric is one of the pipeline's figures on /metrics, read from
// its Stats and its refill's status.
type pipelineMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(Stats, RefillStatus) float64
}

// statsCollector serves the pipeline's figures from one Stats and one
// Refill per scrape: the fetch logic's lock, the EB log's and the
// refill's are each taken once, briefly, as /status takes them, and
// never with another held.
type statsCollector struct {
	p       *Pipeline
	metrics []pipelineMetric
}

func newStatsCollector(p *Pipeline) *statsCollector {
	c := &statsCollector{p: p}
	add := func(kind prometheus.ValueType, name, help string, value func(Stats, RefillStatus) float64) {
		c.metrics = append(c.metrics, pipelineMetric{prometheus.NewDesc("leiosnode_"+name, help, nil, nil), kind, value})
	}
	counter := func(name, help string, value func(Stats) uint64) {
		add(prometheus.CounterValue, name, help, func(s Stats, _ RefillStatus) float64 { return float64(value(s)) })
	}
	counter("leios_fetched_bytes_total", "Bytes of EB bodies and txs fetched from peers.", func(s Stats) uint64 { return s.FetchedBytes })
	add(prometheus.GaugeValue, "leios_requests_in_flight", "LeiosFetch requests in flight.",
		func(s Stats, _ RefillStatus) float64 { return float64(s.RequestsInFlight) })
	counter("leios_closures_complete_total", "EB closures completed.", func(s Stats) uint64 { return s.ClosuresComplete })
	add(prometheus.GaugeValue, "leios_certified_closures_missing", "Closures the selected chain certifies that the LeiosDB lost and the node is fetching again from peers.",
		func(_ Stats, r RefillStatus) float64 { return float64(r.Missing) })
	add(prometheus.GaugeValue, "leios_certified_closures_missing_since_timestamp_seconds", "When the node started fetching again the certified closures its LeiosDB lost; 0 when none is missing.",
		func(_ Stats, r RefillStatus) float64 {
			if r.Missing > 0 {
				return float64(r.Since.UnixNano()) / 1e9
			}
			return 0
		})
	counter("votes_cast_total", "Votes this node cast.", func(s Stats) uint64 { return s.VotesCast })
	counter("votes_received_total", "Valid votes new to this node, from peers.", func(s Stats) uint64 { return s.VotesReceived })
	counter("votes_relayed_total", "Valid votes new to this node, relayed to every peer.", func(s Stats) uint64 { return s.VotesRelayed })
	counter("votes_invalid_total", "Votes refused: unknown RB, seat or signature.", func(s Stats) uint64 { return s.VotesInvalid })
	counter("votes_delivered_total", "Votes peers and this node handed to the relay, copies included.", func(s Stats) uint64 { return s.VotesDelivered })
	counter("votes_verified_total", "Votes whose signatures were checked, in batches.", func(s Stats) uint64 { return s.VotesVerified })
	counter("votes_repeated_total", "Votes a peer sent twice on one stream: its violation.", func(s Stats) uint64 { return s.VotesRepeated })
	counter("equivocations_total", "Slots and issuers seen with two headers: relayed once as evidence, never voted for.", func(s Stats) uint64 { return s.Equivocations })
	counter("votes_shed_total", "Votes dropped unchecked past a peer's verification budget.", func(s Stats) uint64 { return s.VotesShed })
	counter("certificates_verified_total", "Certificates of new CertRBs that verified.", func(s Stats) uint64 { return s.CertsVerified })
	counter("eb_certified_total", "CertRBs applied with their certified closures.", func(s Stats) uint64 { return s.CertsApplied })
	counter("eb_txs_from_mempool_total", "EB closure txs taken from the mempool instead of fetched.", func(s Stats) uint64 { return s.TxsFromMempool })
	return c
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.metrics {
		ch <- m.desc
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s, r := c.p.Stats(), c.p.Refill()
	for _, m := range c.metrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(s, r))
	}
}

// registerMetrics registers the pipeline's figures on reg; the EB
// diffusion histogram is the EB log's (ebtimes.go).
func (p *Pipeline) registerMetrics(reg prometheus.Registerer) error {
	if err := reg.Register(newStatsCollector(p)); err != nil {
		return fmt.Errorf("leios: metrics: %w", err)
	}
	return nil
}
