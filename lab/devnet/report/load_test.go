package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/load"
)

// loadStart is the system start of the load tests' run.
var loadStart = time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)

func ms(v int64) *int64 { return &v }

// fakeLoadRun is a run of two nodes polled once a second from 0 to 70 s
// after the system start, with figures growing at known rates:
//   - node-0: CPU 0.5 core (fetch 0.3, voting 0.2), 100 txs/s on its
//     chain, 10 more mempool txs a second, refused "queue-delay" 0.5/s;
//     its mempool at its bound from 68 s to the end;
//   - node-1: CPU 0.25 core, by work not measured, 100 txs/s on its chain,
//     down at 5 s, refused "mempool-full" 2 then 7 from 40 s on; its
//     mempool at 90 % of its bound or more from 30 s to 36 s;
//   - the firehose: 110 POSTs, 100 distinct txs, 90 admitted and 10
//     refused a second.
//
// EBs: A at 1 s (100 txs, certified), B at 5 s (300 txs), C at 15 s (no
// body), D at 45 s (certified), with their stages and votes; the common
// chain's blocks at 2 s (50 txs), 6 s (30 + a closure of 100), 16 s (40)
// and 46 s (a closure of 200).
func fakeLoadRun() loadRun {
	clock := consensus.Clock{Start: loadStart, SlotLength: 100 * time.Millisecond}
	r := loadRun{clock: clock, rbInterval: time.Second, names: []string{"node-0", "node-1"}}
	for t := range 71 {
		sec := float64(t)
		n0 := &nodeSample{
			mempoolTxs: 10 * t, mempoolBytes: 1000, mempoolCapacity: 10_000, txsOnChain: uint64(100 * t),
			processCPU: 0.5 * sec, cpuByWork: map[string]float64{"fetch": 0.3 * sec, "voting": 0.2 * sec},
			refused: map[string]uint64{"queue-delay": uint64(t / 2)},
		}
		if t >= 68 {
			n0.mempoolBytes = 9_999
		}
		n1 := &nodeSample{mempoolBytes: 100, mempoolCapacity: 10_000, txsOnChain: uint64(100 * t), processCPU: 0.25 * sec, refused: map[string]uint64{"mempool-full": 2}}
		switch {
		case t >= 30 && t <= 34:
			n1.mempoolBytes = 9_500
		case t == 35:
			n1.mempoolBytes = 9_000 // 90 %: still pinned
		case t >= 40:
			n1.refused["mempool-full"] = 7
		}
		if t == 5 {
			n1 = nil
		}
		r.samples = append(r.samples, statusSample{
			at: loadStart.Add(time.Duration(t) * time.Second), nodes: []*nodeSample{n0, n1},
			firehose:     &load.Counts{Posts: uint64(110 * t), Submitted: uint64(100 * t), Admitted: uint64(90 * t), Refused: map[string]uint64{"queue-delay": uint64(10 * t)}},
			generatorCPU: 0.15 * sec, generatorMeasured: true,
		})
	}
	block := &apitypes.TipStatus{BlockNumber: 1}
	eb := func(slot uint64, txs int) EBDiffusion {
		return EBDiffusion{Slot: slot, Forged: clock.SlotStart(slot), Txs: txs, RB: block}
	}
	a := eb(10, 100)
	a.StageMs = map[string]apitypes.StageMs{
		"node-0": {EBStages: apitypes.EBStages[int64]{Announced: ms(0), Body: ms(5), Closure: ms(10), Validated: ms(20), Voted: ms(25)}, Deadline: 600},
		"node-1": {EBStages: apitypes.EBStages[int64]{Announced: ms(50), Body: ms(150), Closure: ms(300), Validated: ms(400)}, Deadline: 600},
	}
	a.Votes = map[string]string{"node-0": apitypes.VoteCast, "node-1": apitypes.VoteClosureIncomplete}
	a.CertifiedBy = block
	b := eb(50, 300)
	b.StageMs = map[string]apitypes.StageMs{
		"node-0": {EBStages: apitypes.EBStages[int64]{Announced: ms(0), Body: ms(7), Closure: ms(12), Validated: ms(15), Voted: ms(18)}, Deadline: 600},
		"node-1": {EBStages: apitypes.EBStages[int64]{Announced: ms(60), Body: ms(200), Closure: ms(700)}, Deadline: 600},
	}
	b.Votes = map[string]string{"node-0": apitypes.VoteCast, "node-1": apitypes.VoteCast}
	c := eb(150, 0)
	c.StageMs = map[string]apitypes.StageMs{"node-1": {EBStages: apitypes.EBStages[int64]{Announced: ms(80)}, Deadline: 600}}
	c.Votes = map[string]string{"node-0": apitypes.VoteClosureIncomplete, "node-1": apitypes.VoteClosureIncomplete}
	d := eb(450, 50)
	d.CertifiedBy = block
	r.ebs = []EBDiffusion{a, b, c, d}
	r.common = []apitypes.BlockTxs{
		{Slot: 20, Txs: make([]string, 50)},
		{Slot: 60, Txs: make([]string, 30), Closure: make([]string, 100)},
		{Slot: 160, Txs: make([]string, 40)},
		{Slot: 460, Closure: make([]string, 200)},
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestTimeline: the windows' stages, votes, sizes, rates and cores are
// those the fake run was built with.
func TestTimeline(t *testing.T) {
	tl := newTimeline(fakeLoadRun(), 10*time.Second)
	if len(tl.Windows) != 7 || tl.DeadlineMs != 600 || tl.WindowSeconds != 10 {
		t.Fatalf("%d windows, deadline %d ms, width %v s; want 7, 600, 10", len(tl.Windows), tl.DeadlineMs, tl.WindowSeconds)
	}
	w0, w1 := tl.Windows[0], tl.Windows[1]
	stages := func(s StageTimes) [5]StagePercentiles {
		var out [5]StagePercentiles
		for i, stage := range apitypes.Stages() {
			if p := *s.At(stage); p != nil {
				out[i] = *p
			}
		}
		return out
	}
	// A and B: announced 0 0 50 60, body 5 7 150 200, closure 10 12 300
	// 700, validated 15 20 400, voted 18 25.
	want0 := [5]StagePercentiles{{4, 25, 60}, {4, 78, 200}, {4, 156, 700}, {3, 20, 400}, {2, 21, 25}}
	if got := stages(w0.Stages); got != want0 {
		t.Errorf("window 0 stages %v, want %v", got, want0)
	}
	if got, want := stages(w1.Stages), [5]StagePercentiles{{1, 80, 80}}; got != want {
		t.Errorf("window 1 stages %v, want %v", got, want)
	}
	if w0.EBs != 2 || w0.MeanEBTxs != 200 || w0.EBsCertified != 1 || w0.VotingPairs != 4 || w0.MissedWindows != 1 || w0.MissedShare != 0.25 {
		t.Errorf("window 0: %+v", w0)
	}
	if w1.EBs != 1 || w1.MeanEBTxs != 0 || w1.EBsCertified != 0 || w1.VotingPairs != 2 || w1.MissedShare != 1 {
		t.Errorf("window 1: %+v", w1)
	}
	for i, w := range tl.Windows[:2] {
		if !near(w.PostsPerSecond, 110) || !near(w.OfferedPerSecond, 100) || !near(w.AdmittedPerSecond, 90) || !near(w.RefusedPerSecond, 10) {
			t.Errorf("window %d rates: posts %v, offered %v, admitted %v, refused %v", i, w.PostsPerSecond, w.OfferedPerSecond, w.AdmittedPerSecond, w.RefusedPerSecond)
		}
		// node-1 missed the poll at 5 s: the window's cores come from the
		// polls bounding it all the same.
		if !near(w.Cores, 0.75) || !near(w.Nodes["node-0"].Cores, 0.5) || !near(w.Nodes["node-1"].Cores, 0.25) {
			t.Errorf("window %d cores %v, by node %+v", i, w.Cores, w.Nodes)
		}
		if len(w.CoresByWork) != 2 || !near(w.CoresByWork["fetch"], 0.3) || !near(w.CoresByWork["voting"], 0.2) || w.Nodes["node-1"].ByWork != nil {
			t.Errorf("window %d cores by work %v (node-1's %v, unmeasured)", i, w.CoresByWork, w.Nodes["node-1"].ByWork)
		}
		if w.Polls != 10 {
			t.Errorf("window %d: %d polls, want 10", i, w.Polls)
		}
	}
	if !near(w0.OnChainPerSecond, 18) || !near(w1.OnChainPerSecond, 4) {
		t.Errorf("on chain %v and %v tx/s, want 18 and 4", w0.OnChainPerSecond, w1.OnChainPerSecond)
	}
	if w0.MempoolTxs != 90 || w1.MempoolTxs != 190 {
		t.Errorf("mempools %d and %d txs, want the fullest: 90 and 190", w0.MempoolTxs, w1.MempoolTxs)
	}
}

// TestTargets: over the span from 10 s to 70 s, the rates, the certified
// EBs per 30 s, the longest pinned mempool and the refusals are those the
// fake run was built with.
func TestTargets(t *testing.T) {
	r := fakeLoadRun()
	span, ok := load.NewSpan(loadStart, 10*time.Second, loadStart.Add(70*time.Second))
	if !ok {
		t.Fatal("no span")
	}
	latency := &load.Latency{Txs: 10, P50Ms: 2000, P95Ms: 4000, MaxMs: 5000}
	tg := newTargets(r, span, 10*time.Second, &load.Report{LatencyInSpan: latency, Lost: 3})
	if tg.FromS != 10 || tg.ToS != 70 || tg.WarmupS != 10 {
		t.Errorf("span %v–%v s, warm-up %v", tg.FromS, tg.ToS, tg.WarmupS)
	}
	if !near(tg.OnChainPerSecond, 4) || !near(tg.OfferedPerSecond, 100) || !near(tg.PostsPerSecond, 110) || !near(tg.AdmittedPerSecond, 90) || !near(tg.RefusedPerSecond, 10) {
		t.Errorf("rates: on chain %v (want 240 txs / 60 s), offered %v, posts %v, admitted %v, refused %v",
			tg.OnChainPerSecond, tg.OfferedPerSecond, tg.PostsPerSecond, tg.AdmittedPerSecond, tg.RefusedPerSecond)
	}
	if tg.EBsAnnounced != 2 || tg.EBsCertified != 1 || tg.CertifiedShare != 0.5 {
		t.Errorf("EBs in the span: %d announced, %d certified, share %v; want C and D, D certified", tg.EBsAnnounced, tg.EBsCertified, tg.CertifiedShare)
	}
	if len(tg.CertifiedPer30s) != 2 || tg.CertifiedPer30s[0] != 0 || tg.CertifiedPer30s[1] != 1 || tg.EveryWindowCertified {
		t.Errorf("certified per 30 s %v, every window %v; want [0 1], false", tg.CertifiedPer30s, tg.EveryWindowCertified)
	}
	if p := tg.MempoolPinned; p == nil || p.Node != "node-1" || p.Seconds != 6 || p.PinnedShare != 0.9 {
		t.Errorf("mempool pinned %+v, want node-1's 6 s (30 s to 36 s)", p)
	}
	if tg.Latency != latency || tg.Lost != 3 {
		t.Errorf("latency %+v, lost %d", tg.Latency, tg.Lost)
	}
	if len(tg.RefusedByNodes) != 2 || tg.RefusedByNodes["queue-delay"] != 30 || tg.RefusedByNodes["mempool-full"] != 5 {
		t.Errorf("refused by the nodes %v, want queue-delay 30 (5 to 35), mempool-full 5", tg.RefusedByNodes)
	}
	if len(tg.RefusedByFirehose) != 1 || tg.RefusedByFirehose["queue-delay"] != 600 {
		t.Errorf("refused to the firehose %v, want queue-delay 600", tg.RefusedByFirehose)
	}

	// A span shorter than 30 s is one window; one that ends before any
	// certified EB has none, and says so.
	short, _ := load.NewSpan(loadStart, 10*time.Second, loadStart.Add(25*time.Second))
	tg = newTargets(r, short, 10*time.Second, nil)
	if len(tg.CertifiedPer30s) != 1 || tg.CertifiedPer30s[0] != 0 || tg.EveryWindowCertified {
		t.Errorf("short span: certified per 30 s %v, every window %v", tg.CertifiedPer30s, tg.EveryWindowCertified)
	}
	if _, ok := load.NewSpan(loadStart, 10*time.Second, loadStart.Add(9*time.Second)); ok {
		t.Error("a run within its warm-up has a span")
	}
}

// TestCPUReport: CPU per 1,000 txs is the CPU's growth over the txs'
// growth per node, beside the floor, and the load generator's over the
// txs it offered; the windows where most voters missed their window are
// told apart by work.
func TestCPUReport(t *testing.T) {
	r := fakeLoadRun()
	span, _ := load.NewSpan(loadStart, 10*time.Second, loadStart.Add(70*time.Second))
	floor := &CPUFloor{FloorSecondsPerKTx: 0.25}
	c := newCPUReport(r, &span, floor, nil, newTimeline(r, 10*time.Second))
	n0, n1 := c.Nodes[0], c.Nodes[1]
	// node-0: 0.5 core over 100 tx/s = 5 s per 1,000 txs; node-1: 2.5 s.
	if !near(n0.SecondsPerKTx, 5) || !near(n0.RatioToFloor, 20) || !near(n0.Cores, 0.5) || !near(n0.TxsPerSecond, 100) || !near(n0.CoresByWork["fetch"], 0.3) {
		t.Errorf("node-0 %+v", n0)
	}
	if !near(n1.SecondsPerKTx, 2.5) || !near(n1.RatioToFloor, 10) || n1.CoresByWork != nil || n1.Problem != "" {
		t.Errorf("node-1 %+v", n1)
	}
	if !near(c.MeanSecondsPerKTx, 3.75) || !near(c.RatioToFloor, 15) {
		t.Errorf("mean %v s per 1,000 txs, %v× the floor; want 3.75, 15", c.MeanSecondsPerKTx, c.RatioToFloor)
	}
	// The generator: 0.15 core over 100 tx/s offered.
	if g := c.Generator; g == nil || !near(g.Cores, 0.15) || !near(g.OfferedPerSecond, 100) || !near(g.SecondsPerKTx, 1.5) || g.Measured == "" {
		t.Errorf("generator %+v, want 0.15 cores, 1.5 s per 1,000 of 100 tx/s offered", g)
	}
	m := c.WhenMissed
	if m.MissedWindows != 1 || m.OtherWindows != 1 || !near(m.MissedCores, 0.75) || !near(m.OtherCores, 0.75) {
		t.Errorf("when missed %+v: want window 1 (all missed) against window 0 (a quarter), 0.75 cores each", m)
	}
	if !near(m.MissedShares["fetch"], 0.6) || !near(m.MissedShares["voting"], 0.4) {
		t.Errorf("shares when missed %v, want fetch 0.6, voting 0.4", m.MissedShares)
	}

	// A node that restarted in the span has no figure, and says why.
	for i := range r.samples[40:] {
		r.samples[40+i].nodes[1].processCPU -= 15
	}
	c = newCPUReport(r, &span, floor, nil, newTimeline(r, 10*time.Second))
	if n := c.Nodes[1]; n.Problem == "" || n.SecondsPerKTx != 0 {
		t.Errorf("restarted node %+v", n)
	}
	if !near(c.MeanSecondsPerKTx, 5) {
		t.Errorf("mean %v, want node-0's alone", c.MeanSecondsPerKTx)
	}

	// A run that did not measure its own CPU has no generator figure.
	for i := range r.samples {
		r.samples[i].generatorMeasured = false
	}
	if c := newCPUReport(r, &span, floor, nil, newTimeline(r, 10*time.Second)); c.Generator != nil {
		t.Errorf("a generator figure without its CPU measured: %+v", c.Generator)
	}
}

// TestLoadSummaryPrinted: the summary gives the targets, the CPU against
// the floor with its definition, and CPU by work when the nodes measure
// it, "not measured" when they do not.
func TestLoadSummaryPrinted(t *testing.T) {
	r := fakeLoadRun()
	span, _ := load.NewSpan(loadStart, 10*time.Second, loadStart.Add(70*time.Second))
	tl := newTimeline(r, 10*time.Second)
	floor := &CPUFloor{Txs: 1000, DecodeSecondsPerKTx: 0.01, WitnessSecondsPerKTx: 0.05, ApplySecondsPerKTx: 0.06, ReapplySecondsPerKTx: 0.002, FloorSecondsPerKTx: 0.072}
	report := Report{
		Txs:      &load.Report{},
		Timeline: tl,
		Targets:  newTargets(r, span, 10*time.Second, &load.Report{}),
		CPU:      newCPUReport(r, &span, floor, nil, tl),
	}
	var out bytes.Buffer
	printLoadSummary(&out, report, 10*time.Second)
	for _, want := range []string{
		"measured span 10–70 s after the system start (warm-up 10 s)",
		"on chain 4.0 tx/s; offered 100.0 tx/s",
		"per 30 s (30 mean RB intervals): 0 1 — NOT every window has one",
		"longest 6 s (node-1)",
		"refused by the nodes' edges: mempool-full 5, queue-delay 30; 503s to the firehose: queue-delay 600",
		"node-0 5.000 s (0.50 cores, 69.4× the floor)",
		"the load generator (this process: the firehose, the status polls, the supervisor; not the nodes): 0.15 cores, 1.500 s per 1,000 txs offered at 100.0 tx/s",
		"= 52.1× the floor",
		"floor 0.072 s per 1,000 txs = decode 0.0100 + apply 0.0600 (its ed25519 witness check alone 0.0500) + reapply 0.0020",
		FloorDefinition,
		"CPU by work where most voters missed their window (1 × 10s at 0.75 cores): fetch 60 %, voting 40 %",
		"CPU by work in the other windows with votes (1 × 10s at 0.75 cores): fetch 60 %, voting 40 %",
		"   10   1     0     80/80         -         -         -         -   100%    0 |     100",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}
	checkFormatted(t, report, out.String())

	// No window where most voters missed theirs: nothing to show there,
	// and not "not measured".
	var missedNone bytes.Buffer
	printWhenMissed(&missedNone, CPUWhenMissed{OtherWindows: 3, OtherCores: 1.2, OtherShares: map[string]float64{"intake": 1}})
	if got := missedNone.String(); !strings.Contains(got, "no window where most voters missed") || strings.Contains(got, "not measured") {
		t.Errorf("without a missed window: %s", got)
	}

	// Without cpuSeconds in /status.
	for _, s := range r.samples {
		s.nodes[0].cpuByWork = nil
	}
	tl = newTimeline(r, 10*time.Second)
	report.CPU = newCPUReport(r, &span, floor, nil, tl)
	out.Reset()
	printLoadSummary(&out, report, 10*time.Second)
	if !strings.Contains(out.String(), "CPU by work not measured") {
		t.Errorf("the summary does not say CPU by work was not measured:\n%s", out.String())
	}

	// A run within its warm-up says so.
	out.Reset()
	printLoadSummary(&out, Report{Txs: &load.Report{}}, time.Minute)
	if !strings.Contains(out.String(), "no measured span") {
		t.Errorf("a run without a span: %s", out.String())
	}
}
