package api

import (
	"fmt"
	"time"

	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/network/chainsync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// registerMetrics exports the node's state beside the host's and the
// pipeline's own metrics.
func (s *Server) registerMetrics() error {
	o := s.opts
	var cs []prometheus.Collector
	gauge := func(name, help string, value func() float64) {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "leiosnode", Name: name, Help: help}, value))
	}
	counter := func(name, help string, value func() float64) {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "leiosnode", Name: name, Help: help}, value))
	}
	gauge("tip_block_number", "Block number of the selected tip.", func() float64 { return float64(o.Chain.Tip().BlockNumber) })
	gauge("tip_slot", "Slot of the selected tip.", func() float64 { return float64(o.Chain.Tip().Point.Slot) })
	gauge("immutable_tip_block_number", "Block number of the immutable tip.", func() float64 { return float64(o.Chain.ImmutableTip().BlockNumber) })
	counter("blocks_adopted_total", "Blocks that changed the selected chain when added.", func() float64 { return float64(o.BlocksAdopted()) })
	counter("errors_total", "Log records at level error.", func() float64 { return float64(o.Errors()) })
	gauge("mempool_txs", "Txs in the mempool.", func() float64 { return float64(o.Mempool.Snapshot().Len()) })
	counter("mempool_syncs_extension_total", "Mempool syncs on a chain extension: the txs carried over, the block's spends dropped.", func() float64 { return float64(o.Mempool.Stats().SyncsExtension) })
	counter("mempool_syncs_full_total", "Mempool syncs that revalidated every tx held (after a rollback).", func() float64 { return float64(o.Mempool.Stats().SyncsFull) })
	gauge("mempool_bytes", "Bytes of the txs in the mempool.", func() float64 { return float64(o.Mempool.Snapshot().Bytes()) })
	counter("leios_fetched_bytes_total", "Bytes of EB bodies and txs fetched from peers.", func() float64 { return float64(o.Leios.Stats().FetchedBytes) })
	gauge("leios_requests_in_flight", "LeiosFetch requests in flight.", func() float64 { return float64(o.Leios.Stats().RequestsInFlight) })
	counter("leios_closures_complete_total", "EB closures completed.", func() float64 { return float64(o.Leios.Stats().ClosuresComplete) })
	gauge("leios_certified_closures_missing", "Closures the selected chain certifies that the LeiosDB lost and the node is fetching again from peers.", func() float64 { return float64(o.Leios.Refill().Missing) })
	gauge("leios_certified_closures_missing_since_timestamp_seconds", "When the node started fetching again the certified closures its LeiosDB lost; 0 when none is missing.", func() float64 {
		if r := o.Leios.Refill(); r.Missing > 0 {
			return float64(r.Since.UnixNano()) / 1e9
		}
		return 0
	})
	gauge("chain_txs", "Txs in the selected chain. A gauge: a rollback lowers it.", func() float64 { return float64(o.TxsOnChain()) })
	gauge("chain_certified_ebs", "CertRBs in the selected chain: the EBs it certifies. A gauge: a rollback lowers it.", func() float64 { return float64(o.CertRBsOnChain()) })
	fromLeios := func(f func(leios.Stats) uint64) func() float64 {
		return func() float64 { return float64(f(o.Leios.Stats())) }
	}
	counter("votes_cast_total", "Votes this node cast.", fromLeios(func(s leios.Stats) uint64 { return s.VotesCast }))
	counter("votes_received_total", "Valid votes new to this node, from peers.", fromLeios(func(s leios.Stats) uint64 { return s.VotesReceived }))
	counter("votes_relayed_total", "Valid votes new to this node, relayed to every peer.", fromLeios(func(s leios.Stats) uint64 { return s.VotesRelayed }))
	counter("votes_invalid_total", "Votes refused: unknown RB, seat or signature.", fromLeios(func(s leios.Stats) uint64 { return s.VotesInvalid }))
	counter("votes_delivered_total", "Votes peers and this node handed to the relay, copies included.", fromLeios(func(s leios.Stats) uint64 { return s.VotesDelivered }))
	counter("votes_verified_total", "Votes whose signatures were checked, in batches.", fromLeios(func(s leios.Stats) uint64 { return s.VotesVerified }))
	counter("votes_repeated_total", "Votes a peer sent twice on one stream: its violation.", fromLeios(func(s leios.Stats) uint64 { return s.VotesRepeated }))
	counter("equivocations_total", "Slots and issuers seen with two headers: relayed once as evidence, never voted for.", fromLeios(func(s leios.Stats) uint64 { return s.Equivocations }))
	counter("votes_shed_total", "Votes dropped unchecked past a peer's verification budget.", fromLeios(func(s leios.Stats) uint64 { return s.VotesShed }))
	counter("certificates_verified_total", "Certificates of new CertRBs that verified.", fromLeios(func(s leios.Stats) uint64 { return s.CertsVerified }))
	counter("eb_certified_total", "CertRBs applied with their certified closures.", fromLeios(func(s leios.Stats) uint64 { return s.CertsApplied }))
	counter("eb_txs_from_mempool_total", "EB closure txs taken from the mempool instead of fetched.", fromLeios(func(s leios.Stats) uint64 { return s.TxsFromMempool }))
	for _, store := range []struct {
		name   string
		stalls func() (uint64, time.Duration)
	}{
		{"chaindb", func() (uint64, time.Duration) { return o.Chain.WriteStalls() }},
		{"leiosdb", func() (uint64, time.Duration) { return o.Leios.DB().WriteStalls() }},
	} {
		labels := prometheus.Labels{"store": store.name}
		cs = append(cs,
			prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "leiosnode", Name: "store_write_stalls_total", ConstLabels: labels,
				Help: "Times Pebble held back every write of the store, its memtables or level 0 too full."},
				func() float64 { n, _ := store.stalls(); return float64(n) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "leiosnode", Name: "store_write_stall_seconds_total", ConstLabels: labels,
				Help: "Time Pebble held back every write of the store."},
				func() float64 { _, d := store.stalls(); return d.Seconds() }))
	}
	cs = append(cs, forkCollectors(o.Forks)...)
	if o.Forger != nil {
		counter("blocks_forged_total", "Blocks this node forged.", func() float64 { return float64(o.Forger.Forged()) })
		counter("certificates_built_total", "Certificates this node built into CertRBs.", func() float64 { return float64(o.Forger.Certificates()) })
	}
	cs = append(cs, s.latency.hist)
	cs = append(cs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range cs {
		if err := o.Registry.Register(c); err != nil {
			return fmt.Errorf("api: metrics: %w", err)
		}
	}
	return nil
}

// forkCollectors export chain sync's fork status: the peers found on a
// deep fork, and whether this node is stranded.
func forkCollectors(forks func() chainsync.ForkStatus) []prometheus.Collector {
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
