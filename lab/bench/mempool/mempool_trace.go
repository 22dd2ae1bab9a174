package mempool

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	exptrace "golang.org/x/exp/trace"

	"github.com/leiosnode/leiosnode/lab/bench/output"
)

// The regions of the execution trace (--trace): each cell is a task, each
// read a region of it.
const (
	regionServeWalk     = "serve walk"
	regionControlWalk   = "control walk"
	regionForgeSnapshot = "forge snapshot"
)

// startTrace starts a Go execution trace into path, with the CPU profiler
// on so that the trace holds CPU samples (a goroutine running in Go's eyes
// yet never sampled was off the CPU); stop ends both.
func startTrace(path string) (stop func(), err error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		file.Close()
		return nil, fmt.Errorf("--trace: the CPU profiler: %w", err)
	}
	if err := trace.Start(file); err != nil {
		pprof.StopCPUProfile()
		file.Close()
		return nil, fmt.Errorf("--trace %s: %w", path, err)
	}
	return func() {
		trace.Stop()
		pprof.StopCPUProfile()
		file.Close()
	}, nil
}

// mpTraceWalks is where one kind of read of one cell spent its time, from
// the execution trace: each read's goroutine's states inside its region.
type mpTraceWalks struct {
	Cell    string `json:"cell"`
	Region  string `json:"region"`
	Reads   int    `json:"reads"`
	Over1ms int    `json:"over_1ms"`
	// The reads over 1 ms, summed: time running (on a P), and the CPU
	// profiler's samples of their goroutines meanwhile (about one per 10
	// ms on a CPU: fewer means their threads were off the CPU, the
	// machine's doing); runnable, waiting for a P; blocked, by the
	// runtime's reason (GC assists, GC stack scans, channels, locks).
	RunningNs  int64            `json:"running_ns"`
	CPUSamples int              `json:"cpu_samples"`
	RunnableNs int64            `json:"runnable_ns"`
	SyscallNs  int64            `json:"syscall_ns"`
	BlockedNs  map[string]int64 `json:"blocked_ns"`
	// Longest is the longest read and where its time went.
	LongestNs int64  `json:"longest_ns"`
	Longest   string `json:"longest"`
}

// traceRead is one read under way or done.
type traceRead struct {
	start      exptrace.Time
	running    int64
	samples    int
	runnable   int64
	syscall    int64
	blocked    map[string]int64
	lastReason string
}

func (r *traceRead) add(state exptrace.GoState, reason string, d int64) {
	switch state {
	case exptrace.GoRunning:
		r.running += d
	case exptrace.GoRunnable:
		r.runnable += d
	case exptrace.GoSyscall:
		r.syscall += d
	case exptrace.GoWaiting:
		if r.blocked == nil {
			r.blocked = map[string]int64{}
		}
		r.blocked[reason] += d
	}
}

func (r *traceRead) String() string {
	parts := []string{fmt.Sprintf("running %s (%d CPU samples)", output.Duration(time.Duration(r.running)), r.samples)}
	if r.runnable > 0 {
		parts = append(parts, "runnable "+output.Duration(time.Duration(r.runnable)))
	}
	if r.syscall > 0 {
		parts = append(parts, "in a syscall "+output.Duration(time.Duration(r.syscall)))
	}
	for _, reason := range slices.Sorted(maps.Keys(r.blocked)) {
		parts = append(parts, fmt.Sprintf("blocked (%s) %s", reason, output.Duration(time.Duration(r.blocked[reason]))))
	}
	return strings.Join(parts, ", ")
}

// traceGoroutine is what the analysis follows of one goroutine.
type traceGoroutine struct {
	state  exptrace.GoState
	reason string // why it is waiting
	since  exptrace.Time
	read   *traceRead
	kind   mpTraceKey
}

type mpTraceKey struct{ cell, region string }

// analyzeMPTrace reads a trace --trace wrote and sums, per cell and kind
// of read, where the reads over 1 ms spent their time.
func analyzeMPTrace(path string) ([]mpTraceWalks, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := exptrace.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	tasks := map[exptrace.TaskID]string{}
	gs := map[exptrace.GoID]*traceGoroutine{}
	results := map[mpTraceKey]*mpTraceWalks{}
	var order []mpTraceKey
	goroutine := func(id exptrace.GoID) *traceGoroutine {
		g := gs[id]
		if g == nil {
			g = &traceGoroutine{state: exptrace.GoUndetermined}
			gs[id] = g
		}
		return g
	}
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		now := ev.Time()
		switch ev.Kind() {
		case exptrace.EventTaskBegin:
			tasks[ev.Task().ID] = ev.Task().Type
		case exptrace.EventRegionBegin:
			region := ev.Region()
			if region.Type != regionServeWalk && region.Type != regionControlWalk && region.Type != regionForgeSnapshot {
				continue
			}
			g := goroutine(ev.Goroutine())
			g.state, g.since = exptrace.GoRunning, now // it is running what begins the region
			g.read = &traceRead{start: now}
			g.kind = mpTraceKey{tasks[region.Task], region.Type}
		case exptrace.EventRegionEnd:
			g := goroutine(ev.Goroutine())
			if g.read == nil {
				continue
			}
			g.read.add(g.state, g.reason, int64(now-g.since))
			res := results[g.kind]
			if res == nil {
				res = &mpTraceWalks{Cell: g.kind.cell, Region: g.kind.region, BlockedNs: map[string]int64{}}
				results[g.kind] = res
				order = append(order, g.kind)
			}
			res.note(g.read, int64(now-g.read.start))
			g.read = nil
		case exptrace.EventStackSample:
			if g := gs[ev.Goroutine()]; g != nil && g.read != nil {
				g.read.samples++
			}
		case exptrace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != exptrace.ResourceGoroutine {
				continue
			}
			g := goroutine(st.Resource.Goroutine())
			from, to := st.Goroutine()
			if g.read != nil {
				g.read.add(g.state, g.reason, int64(now-g.since))
			}
			if from != to { // a restatement at a trace generation's start keeps the reason
				g.reason = st.Reason
			}
			g.state, g.since = to, now
		}
	}
	out := make([]mpTraceWalks, 0, len(order))
	for _, k := range order {
		out = append(out, *results[k])
	}
	return out, nil
}

// note counts one read that took d.
func (w *mpTraceWalks) note(r *traceRead, d int64) {
	w.Reads++
	if d > w.LongestNs {
		w.LongestNs, w.Longest = d, r.String()
	}
	if d <= int64(time.Millisecond) {
		return
	}
	w.Over1ms++
	w.RunningNs += r.running
	w.CPUSamples += r.samples
	w.RunnableNs += r.runnable
	w.SyscallNs += r.syscall
	for reason, ns := range r.blocked {
		w.BlockedNs[reason] += ns
	}
}

// writeMPTrace prints the trace's analysis: for each cell, where the walks
// and their controls over 1 ms spent their time.
func writeMPTrace(w io.Writer, walks []mpTraceWalks) {
	fmt.Fprintln(w, "\nWhere the reads over 1 ms spent their time (execution trace): running, with the CPU profiler's samples of it (about one per 10 ms on a CPU;")
	fmt.Fprintln(w, "none: its thread was off the CPU); runnable, waiting for a P; blocked, by the runtime's reason (\"preempted\": suspended for a GC stack scan)")
	for _, t := range walks {
		if t.Region == regionForgeSnapshot && t.Over1ms == 0 {
			continue
		}
		fmt.Fprintf(w, "%s, %s: %d of %d over 1 ms", t.Cell, t.Region, t.Over1ms, t.Reads)
		if t.Over1ms > 0 {
			r := traceRead{running: t.RunningNs, samples: t.CPUSamples, runnable: t.RunnableNs, syscall: t.SyscallNs, blocked: t.BlockedNs}
			fmt.Fprintf(w, ": %s", r.String())
		}
		fmt.Fprintf(w, "; longest %s: %s\n", output.Duration(time.Duration(t.LongestNs)), t.Longest)
	}
}
