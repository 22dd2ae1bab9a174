package report

import (
	"math"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/lab/load"
)

// Timeline is the run in windows of timelineWidth from the system start:
// how late each stage of the EBs came, how many voters missed their
// voting windows, what the firehose offered and the chain carried, and
// where the nodes' CPU went. An engineer reads the cause of a collapse off
// it: the window where the stages slid past the deadline, and what took
// the CPU then.
type Timeline struct {
	// Measured says what was measured, in words.
	Measured      string  `json:"measured"`
	WindowSeconds float64 `json:"windowSeconds"`
	// DeadlineMs is the end of the voting window in ms after an EB's slot
	// start, as the nodes gave it.
	DeadlineMs int64            `json:"deadlineMs"`
	Windows    []TimelineWindow `json:"windows"`
}

// timelineMeasured is Timeline.Measured.
const timelineMeasured = "windows from the system start; EBs by the start of their slot, each stage in ms after it, " +
	"p50 and p95 over every (EB, node) pair that reached the stage; missed: (EB, voting node) pairs whose vote was " +
	"\"" + apitypes.VoteClosureIncomplete + "\"; rates from the firehose's counts and the common chain's blocks by slot; " +
	"cores: the growth of the nodes' processCpuSeconds (and cpuSeconds by work) between the status polls bounding the window; " +
	"a node adds to cpuSeconds once per window of its CPU sampler (seconds), so by work a window may show less than its processCpuSeconds, " +
	"the next one more"

// TimelineWindow is one window of the timeline; its seconds count from the
// system start.
type TimelineWindow struct {
	FromS float64 `json:"fromS"`
	ToS   float64 `json:"toS"`
	// EBs counts the EBs whose slot started in the window; MeanEBTxs is
	// their mean size over those whose body some node held; EBsCertified
	// those the common chain certified.
	EBs          int        `json:"ebs"`
	MeanEBTxs    float64    `json:"meanEbTxs"`
	EBsCertified int        `json:"ebsCertified"`
	Stages       StageTimes `json:"stages"`
	// VotingPairs counts the (EB, node) pairs with a vote outcome,
	// MissedWindows those whose closure was incomplete in the voting
	// window, MissedShare their share.
	VotingPairs   int     `json:"votingPairs"`
	MissedWindows int     `json:"missedWindows"`
	MissedShare   float64 `json:"missedShare"`
	// Polls counts the status polls in the window that some node answered;
	// without one, the rates, mempools and cores below are 0 unmeasured.
	Polls int `json:"polls"`
	// Per second over the window: the firehose's POSTs, distinct txs sent
	// (offered), admitted and refused (503 answers), and the txs of the
	// common chain's blocks whose slot started in it.
	PostsPerSecond    float64 `json:"postsPerSecond"`
	OfferedPerSecond  float64 `json:"offeredPerSecond"`
	AdmittedPerSecond float64 `json:"admittedPerSecond"`
	RefusedPerSecond  float64 `json:"refusedPerSecond"`
	OnChainPerSecond  float64 `json:"onChainPerSecond"`
	// MempoolTxs and MempoolBytes are the fullest mempool a node reported
	// in the window.
	MempoolTxs   int `json:"mempoolTxs"`
	MempoolBytes int `json:"mempoolBytes"`
	// Cores is the CPU cores the nodes' processes used, summed over the
	// nodes; CoresByWork the same by work, absent when the nodes did not
	// measure it; Nodes the same per node.
	Cores       float64              `json:"cores"`
	CoresByWork map[string]float64   `json:"coresByWork,omitempty"`
	Nodes       map[string]NodeCores `json:"nodes,omitempty"`
}

// StageTimes are an EB's stages' times after its slot start, over (EB,
// node) pairs; a stage no pair reached is absent. The stages are the
// API's (apitypes.EBStages), so the timeline names the fields a node's GET
// /api/ebs does.
type StageTimes = apitypes.EBStages[StagePercentiles]

// StagePercentiles are one stage's ms after the slot start over Pairs (EB,
// node) pairs.
type StagePercentiles struct {
	Pairs int   `json:"pairs"`
	P50Ms int64 `json:"p50Ms"`
	P95Ms int64 `json:"p95Ms"`
}

// NodeCores is one node's CPU in a window: cores used, and by work when
// measured.
type NodeCores struct {
	Cores  float64            `json:"cores"`
	ByWork map[string]float64 `json:"byWork,omitempty"`
}

// newTimeline cuts the run into windows of width from the system start,
// up to the last poll or EB, whichever came later.
func newTimeline(r loadRun, width time.Duration) *Timeline {
	t := &Timeline{Measured: timelineMeasured, WindowSeconds: width.Seconds(), Windows: []TimelineWindow{}}
	start := r.clock.Start
	end := start
	if len(r.samples) > 0 {
		end = r.samples[len(r.samples)-1].at
	}
	for _, eb := range r.ebs {
		end = later(end, eb.Forged)
		for _, s := range eb.StageMs {
			t.DeadlineMs = max(t.DeadlineMs, s.Deadline)
		}
	}
	count := int(math.Ceil(end.Sub(start).Seconds() / width.Seconds()))
	for i := range count {
		from := start.Add(time.Duration(i) * width)
		t.Windows = append(t.Windows, r.window(from, from.Add(width)))
	}
	return t
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// window is the timeline's window [from, to).
func (r loadRun) window(from, to time.Time) TimelineWindow {
	w := TimelineWindow{FromS: from.Sub(r.clock.Start).Seconds(), ToS: to.Sub(r.clock.Start).Seconds()}
	r.windowEBs(&w, from, to)
	r.windowRates(&w, from, to)
	r.windowCPU(&w, from, to)
	return w
}

// windowEBs fills in the window's EBs, stages and votes.
func (r loadRun) windowEBs(w *TimelineWindow, from, to time.Time) {
	stages := map[apitypes.Stage][]int64{}
	sized, txs := 0, 0
	for _, eb := range r.ebs {
		if eb.Forged.Before(from) || !eb.Forged.Before(to) {
			continue
		}
		w.EBs++
		if eb.Txs > 0 {
			sized++
			txs += eb.Txs
		}
		if eb.CertifiedBy != nil {
			w.EBsCertified++
		}
		for _, s := range eb.StageMs {
			for _, stage := range apitypes.Stages() {
				if ms := *s.At(stage); ms != nil {
					stages[stage] = append(stages[stage], *ms)
				}
			}
		}
		for _, vote := range eb.Votes {
			w.VotingPairs++
			if vote == apitypes.VoteClosureIncomplete {
				w.MissedWindows++
			}
		}
	}
	if sized > 0 {
		w.MeanEBTxs = float64(txs) / float64(sized)
	}
	if w.VotingPairs > 0 {
		w.MissedShare = float64(w.MissedWindows) / float64(w.VotingPairs)
	}
	for _, stage := range apitypes.Stages() {
		if ms := stages[stage]; len(ms) > 0 {
			*w.Stages.At(stage) = newStagePercentiles(ms)
		}
	}
}

func newStagePercentiles(ms []int64) *StagePercentiles {
	slices.Sort(ms)
	return &StagePercentiles{Pairs: len(ms), P50Ms: medianOfSorted(ms), P95Ms: nearestRank(ms, 0.95)}
}

// nearestRank is the q-quantile (0 < q ≤ 1) of a sorted, non-empty list:
// the least value with at least a fraction q of the list at or below it.
func nearestRank(sorted []int64, q float64) int64 {
	return sorted[max(int(math.Ceil(q*float64(len(sorted))))-1, 0)]
}

// windowRates fills in the window's rates and mempools.
func (r loadRun) windowRates(w *TimelineWindow, from, to time.Time) {
	w.PostsPerSecond, _ = sampleGrowth(r.samples, from, to, firehoseValue(func(c load.Counts) float64 { return float64(c.Posts) }))
	w.OfferedPerSecond, _ = sampleGrowth(r.samples, from, to, firehoseValue(func(c load.Counts) float64 { return float64(c.Submitted) }))
	w.AdmittedPerSecond, _ = sampleGrowth(r.samples, from, to, firehoseValue(func(c load.Counts) float64 { return float64(c.Admitted) }))
	w.RefusedPerSecond, _ = sampleGrowth(r.samples, from, to, firehoseValue(func(c load.Counts) float64 { return float64(sumCounts(c.Refused)) }))
	if r.common != nil {
		w.OnChainPerSecond = float64(r.onChainTxs(from, to)) / to.Sub(from).Seconds()
	}
	for _, s := range r.samples {
		if s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		answered := false
		for _, n := range s.nodes {
			if n != nil {
				w.MempoolTxs, w.MempoolBytes = max(w.MempoolTxs, n.mempoolTxs), max(w.MempoolBytes, n.mempoolBytes)
				answered = true
			}
		}
		if answered {
			w.Polls++
		}
	}
}

// windowCPU fills in the cores the nodes used in the window.
func (r loadRun) windowCPU(w *TimelineWindow, from, to time.Time) {
	for i, name := range r.names {
		cores, ok := sampleGrowth(r.samples, from, to, nodeValue(i, func(n *nodeSample) float64 { return n.processCPU }))
		if !ok {
			continue
		}
		nc := NodeCores{Cores: cores, ByWork: r.coresByWork(i, from, to)}
		if w.Nodes == nil {
			w.Nodes = map[string]NodeCores{}
		}
		w.Nodes[name] = nc
		w.Cores += cores
		for work, c := range nc.ByWork {
			if w.CoresByWork == nil {
				w.CoresByWork = map[string]float64{}
			}
			w.CoresByWork[work] += c
		}
	}
}

// coresByWork is the cores node i used in [from, to] by work, nil when it
// did not measure its CPU by work.
func (r loadRun) coresByWork(i int, from, to time.Time) map[string]float64 {
	works := map[string]bool{}
	for _, s := range r.samples {
		if n := s.nodes[i]; n != nil {
			for work := range n.cpuByWork {
				works[work] = true
			}
		}
	}
	var byWork map[string]float64
	for work := range works {
		cores, ok := sampleGrowth(r.samples, from, to, func(s statusSample) (float64, bool) {
			n := s.nodes[i]
			if n == nil || n.cpuByWork == nil {
				return 0, false
			}
			return n.cpuByWork[work], true // a work not yet seen has spent nothing
		})
		if ok {
			if byWork == nil {
				byWork = map[string]float64{}
			}
			byWork[work] = cores
		}
	}
	return byWork
}
