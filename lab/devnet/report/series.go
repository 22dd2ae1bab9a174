package report

import (
	"maps"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/load"
)

// StatusSeries keeps, from the supervisor's status polls, what the
// report's plots and its timeline use over time: per round of polls, each
// node's figures and the firehose's counts. It is used by the
// supervisor's loop alone.
type StatusSeries struct {
	start   time.Time // the devnet's start; samples' seconds count from it
	names   []string
	samples []statusSample
	// firehose, when not nil, reads the firehose's counts at each round.
	firehose func() load.Counts
}

// statusSample is one round of polls: per node, nil when it did not
// answer.
type statusSample struct {
	at       time.Time
	seconds  float64 // since start
	nodes    []*nodeSample
	firehose *load.Counts // nil without a firehose
	// generatorCPU is this process's CPU seconds (user and system) at the
	// round, the firehose's among them, when it runs one and has a CPU
	// clock (generatorMeasured).
	generatorCPU      float64
	generatorMeasured bool
}

// nodeSample is what one node's status said. The CPU seconds and refusals
// count since the node's process started.
type nodeSample struct {
	tip             uint64 // block number
	mempoolTxs      int
	mempoolBytes    int
	mempoolCapacity int // bytes; 0 when the node did not say
	txsOnChain      uint64
	processCPU      float64            // seconds, user and system
	cpuByWork       map[string]float64 // seconds by work; nil when not measured
	refused         map[string]uint64  // submissions its edge refused, by reason
}

// NewStatusSeries keeps the series of nodes from start; firehose, when
// not nil, reads the firehose's counts at each round.
func NewStatusSeries(nodes []layout.Node, start time.Time, firehose func() load.Counts) *StatusSeries {
	s := &StatusSeries{start: start, firehose: firehose}
	for _, n := range nodes {
		s.names = append(s.names, n.Name)
	}
	return s
}

// observe records one round of polls, taken at at.
func (s *StatusSeries) Observe(at time.Time, polls []apiclient.StatusPoll) {
	sample := statusSample{at: at, seconds: at.Sub(s.start).Seconds(), nodes: make([]*nodeSample, len(polls))}
	for i, p := range polls {
		st := p.Status
		if st == nil {
			continue
		}
		n := &nodeSample{
			tip: st.Tip.BlockNumber, mempoolTxs: st.Mempool.Txs, mempoolBytes: st.Mempool.Bytes,
			mempoolCapacity: st.Mempool.CapacityBytes, txsOnChain: st.TxsOnChain,
			processCPU: st.ProcessCPUSeconds, cpuByWork: maps.Clone(st.CPUSeconds),
		}
		if st.Admission != nil {
			n.refused = maps.Clone(st.Admission.Refused)
		}
		sample.nodes[i] = n
	}
	if s.firehose != nil {
		counts := s.firehose()
		sample.firehose = &counts
		if cpu, ok := cpuwork.ProcessTime(); ok {
			sample.generatorCPU, sample.generatorMeasured = cpu.Seconds(), true
		}
	}
	s.samples = append(s.samples, sample)
}
