package report

import (
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/load"
)

// The report's windows of protocol time are so many mean RB intervals
// (slot length / f), so that each holds as many RBs, and EBs, whatever the
// genesis: at the devnet template's 1 s interval, its old fixed widths.
const (
	// timelineRBs is the timeline's window: 10 s on the devnet.
	timelineRBs = 10
	// certifiedWindowRBs is the window in which an EB must be certified
	// (Targets.EveryWindowCertified): 30 s on the devnet. At p_cert 0.39
	// (f 0.1) and 0.63 (f 0.05) a window without one by chance alone has
	// a probability of 4·10⁻⁷ and 10⁻¹³.
	certifiedWindowRBs = 30
	// onChainRateRBs is the span of the plotted on-chain rate: 5 s on the
	// devnet, about five blocks with their EBs' txs.
	onChainRateRBs = 5
)

// The least widths of the windows above, a presentation choice: the
// status polls come a second apart, and a window holds several.
const (
	minTimelineWidth   = 10 * time.Second
	minOnChainRateSpan = 5 * time.Second
)

// rbWindow is rbs mean RB intervals, in whole seconds, at least least.
func rbWindow(rbs int, rbInterval, least time.Duration) time.Duration {
	return max(least, (time.Duration(rbs) * rbInterval).Round(time.Second))
}

// timelineWidth is the width of the timeline's windows at a mean RB
// interval.
func timelineWidth(rbInterval time.Duration) time.Duration {
	return rbWindow(timelineRBs, rbInterval, minTimelineWidth)
}

// certifiedWindow is the width of the windows in which EBs must be
// certified.
func (r loadRun) certifiedWindow() time.Duration {
	return rbWindow(certifiedWindowRBs, r.rbInterval, time.Second)
}

// loadRun is what the report's load sections (timeline, targets, cpu) are
// computed from: the supervisor's polls, the EBs and the common chain, as
// gathered at the end of a run.
type loadRun struct {
	clock consensus.Clock // its Start is the system start
	// rbInterval is the network's mean RB interval (slot length / f).
	rbInterval time.Duration
	names      []string // the nodes', in node order
	samples    []statusSample
	ebs        []EBDiffusion
	common     []apitypes.BlockTxs // the blocks every node's chain holds; nil when none was read
	hops       [][]int             // Observations.Hops
}

// onChainTxs counts the txs the common chain applied in blocks whose slot
// started in [from, to): their own and the closures they certified.
func (r loadRun) onChainTxs(from, to time.Time) int {
	n := 0
	for _, b := range r.common {
		if at := r.clock.SlotStart(b.Slot); !at.Before(from) && at.Before(to) {
			n += len(b.Txs) + len(b.Closure)
		}
	}
	return n
}

// sampleGrowth is the per-second growth of a running count between two
// samples bounding [from, to]: the latest at or before from (else the
// first after it) and the latest at or before to, both with a value. value
// reads the count from a sample, false when the sample lacks it. ok is
// false without two such samples, or when the count went down between them
// (a node restarted, and counts again from zero).
func sampleGrowth(samples []statusSample, from, to time.Time, value func(statusSample) (float64, bool)) (perSecond float64, ok bool) {
	first, last := -1, -1
	for i, s := range samples {
		if _, has := value(s); !has {
			continue
		}
		switch {
		case !s.at.After(from):
			first = i
		case first < 0:
			first = i
		}
		if !s.at.After(to) {
			last = i
		}
	}
	if first < 0 || last <= first {
		return 0, false
	}
	a, _ := value(samples[first])
	prev := a
	for _, s := range samples[first+1 : last+1] {
		if v, has := value(s); has {
			if v < prev {
				return 0, false
			}
			prev = v
		}
	}
	span := samples[last].at.Sub(samples[first].at).Seconds()
	if span <= 0 {
		return 0, false
	}
	return (prev - a) / span, true
}

// countDelta is the growth of running counts by key between the samples
// sampleGrowth would take for [from, to], with the counts read by counts
// (nil: the sample lacks them).
func countDelta(samples []statusSample, from, to time.Time, counts func(statusSample) map[string]uint64) map[string]uint64 {
	first, last := -1, -1
	for i, s := range samples {
		if counts(s) == nil {
			continue
		}
		if !s.at.After(from) || first < 0 {
			first = i
		}
		if !s.at.After(to) {
			last = i
		}
	}
	delta := map[string]uint64{}
	if first < 0 || last < first {
		return delta
	}
	before, after := counts(samples[first]), counts(samples[last])
	for k, n := range after {
		if n > before[k] {
			delta[k] = n - before[k]
		}
	}
	return delta
}

// nodeValue reads a figure of node i from a sample.
func nodeValue(i int, figure func(*nodeSample) float64) func(statusSample) (float64, bool) {
	return func(s statusSample) (float64, bool) {
		if n := s.nodes[i]; n != nil {
			return figure(n), true
		}
		return 0, false
	}
}

// firehoseValue reads a firehose count from a sample.
func firehoseValue(count func(load.Counts) float64) func(statusSample) (float64, bool) {
	return func(s statusSample) (float64, bool) {
		if s.firehose == nil {
			return 0, false
		}
		return count(*s.firehose), true
	}
}

// sumCounts adds counts by key.
func sumCounts(counts map[string]uint64) uint64 {
	var total uint64
	for _, n := range counts {
		total += n
	}
	return total
}
