package devnet

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
	"github.com/leiosnode/leiosnode/lab/devnet/chaos"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/devnet/report"
	"github.com/leiosnode/leiosnode/lab/devnet/supervisor"
	"github.com/leiosnode/leiosnode/lab/devnet/ui"
	"github.com/leiosnode/leiosnode/lab/devnet/wan"
	"github.com/leiosnode/leiosnode/lab/load"
)

// DefaultTxRate is the devnet command's --tx-rate: 500 payment txs (some
// 100 kB) a second, a little more than RBs carry (90 kB a block, a block a
// second on average), so that most RBs announce an EB and the certified
// ones carry the rest: a plain devnet shows EBs announced and certified
// within its first minute.
const DefaultTxRate = 500

// DefaultWarmup is the shortest default --warmup of the devnet command:
// the part of a run left out of its targets and CPU figures, while the
// mempools fill and the first EBs diffuse (see Warmup).
const DefaultWarmup = 60 * time.Second

// Warmup is the devnet command's default --warmup for a network of genesis
// g: DefaultWarmup, or twice the latency model's p95 if longer, so that
// the first EBs' txs have reached the chain before the figures count
// (a minute at the devnet's timing, 3.5 at the CIP's).
func Warmup(g *consensus.Genesis) time.Duration {
	p, err := capacity.FromGenesis(g)
	if err != nil {
		return DefaultWarmup
	}
	m, err := capacity.NewLatencyModel(p)
	if err != nil {
		return DefaultWarmup
	}
	return max(DefaultWarmup, 2*time.Duration(m.P95Ms)*time.Millisecond).Round(time.Second)
}

// Options say how Run runs a devnet.
type Options struct {
	// Spec is the devnet to generate. An empty Spec.Dir is a fresh
	// temporary directory.
	Spec layout.Spec
	// NodeExecutable is the program each node runs as its own process:
	// `NodeExecutable run --config DIR/node-i/config.json`. Default ""
	// is this process's own executable (os.Executable), the leiosnode
	// binary when the devnet command calls Run.
	NodeExecutable string
	// Duration stops the devnet after this long. Default 0 runs it until
	// ctx is cancelled.
	Duration time.Duration
	// TxRate is the txs per second the firehose submits over all nodes.
	// Default 0 is no firehose; the devnet command's default is
	// DefaultTxRate.
	TxRate float64
	// TxSize is the distribution of the firehose's tx sizes (load.TxSize).
	// Default: plain payments.
	TxSize load.TxSize
	// Warmup is the part of the run, from the system start, that its
	// targets and CPU figures leave out (see Targets). Default 0 leaves
	// out nothing; the devnet command's default is DefaultWarmup.
	Warmup time.Duration
	// ReportFile receives the JSON Report at the end. Default "" writes
	// none.
	ReportFile string
	// Chaos, when set, injects its faults while the devnet runs (see
	// chaos.Spec) and adds a chaos section to the report; ChaosSeed seeds
	// its random choices.
	Chaos     *chaos.Spec
	ChaosSeed uint64
	// TraceFile, when set, receives every node's events in the Leios
	// simulators' trace format, merged in time order, nodes named by name
	// (each node writes its own trace while it runs; Spec.Trace).
	TraceFile string
	// UIAddr, when set, is the host:port where the live view of the
	// devnet is served while it runs (package ui).
	UIAddr string
}

// Run generates the devnet of opts.Spec and runs each of its nodes as its
// own process until ctx is cancelled or opts.Duration has passed, printing
// to out each node's command line and a status line a second. Then it
// checks the firehose's txs, stops the nodes and writes the report. A
// cancelled ctx is a normal end, not an error.
func Run(ctx context.Context, opts Options, out io.Writer) error {
	out = &syncWriter{w: out} // the chaos mode and node restarts print too
	d, err := writeDevnet(opts, out)
	if err != nil {
		return err
	}
	client := apiclient.NewHTTPClient()
	exe, err := nodeExecutable(opts.NodeExecutable)
	if err != nil {
		return err
	}
	var view *ui.View
	if opts.UIAddr != "" {
		var stopView func()
		if view, stopView, err = startLiveView(opts.UIAddr, d, out); err != nil {
			return err
		}
		defer stopView()
	}
	mesh, err := startLinks(d)
	if err != nil {
		return err
	}
	defer mesh.Close()

	r := &devnetRun{opts: opts, out: out, d: d, client: client, view: view, started: time.Now()}
	if r.procs, err = startNodes(exe, d.Nodes, runArgs(opts, d), out); err != nil {
		return err
	}
	defer r.procs.Stop() // an early return must not leave nodes behind
	firstProcs := r.procs.All()
	var counts func() load.Counts
	if opts.TxRate > 0 {
		if r.firehose, err = r.openFirehose(ctx); err != nil {
			return err
		}
		if r.firehose != nil {
			counts = r.firehose.Counts
		}
	}
	r.watch, r.series = report.NewChainWatch(d.Nodes), report.NewStatusSeries(d.Nodes, r.started, counts)
	if opts.Chaos != nil {
		r.chaos, r.forks = chaos.New(d, r.procs, mesh, client, out, *opts.Chaos, opts.ChaosSeed, r.started, opts.Duration)
	}

	span := r.load(ctx)
	txs, walks := r.settleTxs(span)
	r.watch.Observe(pollStatuses(context.Background(), client, d.Nodes))
	links := accountLinks(context.Background(), client, d, mesh, firstProcs, r.procs, out)
	o := report.Observations{
		Dir: d.Dir, Started: r.started, Genesis: d.Genesis, Warmup: opts.Warmup, Watch: r.watch, Series: r.series,
		EBLists: pollEBLists(context.Background(), client, d.Nodes, ebListTimeout), Walks: walks, Txs: txs, Span: span,
		Hops: d.Hops(),
	}
	o.Slot = d.Genesis.Clock().SlotAt(time.Now())
	o.Exited = r.stopNodes()
	o.Stopped = time.Now()
	if opts.TraceFile != "" {
		n, err := mergeTraces(d, opts.TraceFile)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "trace: %d events of %d nodes in %s (Leios simulators' format)\n", n, len(d.Nodes)+len(d.Relays), opts.TraceFile)
	}
	if r.firehose != nil {
		o.FloorSample = r.firehose.FloorSample()
	}
	if r.chaos != nil {
		o.Chaos = &report.ChaosRun{Spec: *opts.Chaos, Seed: opts.ChaosSeed, Faults: r.chaos.Faults(), Stopped: r.chaos.Stopped(), Forks: r.forks.Seen()}
		if r.firehose != nil {
			o.Chaos.Drops = r.firehose.Drops()
		}
	}
	rep := report.Build(o, out)
	rep.Links = links
	return r.writeReport(rep)
}

// devnetRun is what the phases of a running devnet share.
type devnetRun struct {
	opts     Options
	out      io.Writer
	d        *layout.Layout
	client   *http.Client
	firehose *load.Firehose // nil without Options.TxRate
	view     *ui.View       // nil without Options.UIAddr
	started  time.Time      // when the nodes were started
	procs    *supervisor.Processes
	watch    *report.ChainWatch
	series   *report.StatusSeries
	chaos    *chaos.Scheduler // nil without Options.Chaos
	forks    *chaos.ForkWatch // nil without Options.Chaos
}

// writeDevnet writes the devnet of opts (in a fresh temporary directory
// when opts.Spec.Dir is empty; with a proxy per link when a topology or a
// link's latency or bandwidth is to be emulated, or for the chaos mode's
// partitions) and prints where it is.
func writeDevnet(opts Options, out io.Writer) (*layout.Layout, error) {
	spec := opts.Spec
	spec.Trace = spec.Trace || opts.TraceFile != ""
	spec.ProxyLinks = spec.ProxyLinks || spec.Topology != nil || !spec.LinkShape.IsZero()
	if opts.Chaos != nil {
		if err := opts.Chaos.Check(spec.Nodes); err != nil {
			return nil, err
		}
		spec.ProxyLinks = spec.ProxyLinks || opts.Chaos.Has(chaos.Partition)
	}
	if spec.Dir == "" {
		dir, err := os.MkdirTemp("", "leiosnode-devnet-")
		if err != nil {
			return nil, err
		}
		spec.Dir = dir
	}
	d, err := layout.Write(spec)
	if err != nil {
		return nil, err
	}
	d.Print(out)
	return d, nil
}

// nodeExecutable is exe, or this process's own executable when exe is "".
func nodeExecutable(exe string) (string, error) {
	if exe != "" {
		return exe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this binary to start the nodes: %w", err)
	}
	return exe, nil
}

// startLinks starts the proxy of every link of d; nil when d has none.
func startLinks(d *layout.Layout) (*wan.Mesh, error) {
	if len(d.Links) == 0 {
		return nil, nil
	}
	return wan.Start(d)
}

// runArgs are the nodes' run arguments beyond their config: the chaos
// mode's equivocating pool, the last one.
func runArgs(opts Options, d *layout.Layout) map[string][]string {
	if opts.Chaos == nil || !opts.Chaos.Equivocate {
		return nil
	}
	return map[string][]string{d.Nodes[len(d.Nodes)-1].Name: {"--chaos-equivocate"}}
}

// startNodes starts every node's process and prints its command line.
func startNodes(exe string, nodes []layout.Node, args map[string][]string, out io.Writer) (*supervisor.Processes, error) {
	procs, err := supervisor.Start(exe, nodes, args, supervisor.StopTimeout)
	if err != nil {
		return nil, err
	}
	for _, p := range procs.All() {
		fmt.Fprintf(out, "%s (pid %d): %s\n", p.Name(), p.Pid(), p.CommandLine())
	}
	return procs, nil
}

// openFirehose waits until every node's API answers, then opens the
// firehose of the devnet's funds over them: it reads the parameters and
// the funds' outputs from the nodes, as it would on any network. A node
// that exits first is an error naming its log; a ctx that ends first
// leaves the run without a firehose.
func (r *devnetRun) openFirehose(ctx context.Context) (*load.Firehose, error) {
	keys, err := load.FundsKeys(filepath.Join(r.d.Dir, layout.FundsDirName))
	if err != nil {
		return nil, fmt.Errorf("the firehose's funds: %w", err)
	}
	if len(keys) == 0 {
		fmt.Fprintln(r.out, "no funded addresses (--funded 0): the devnet runs without txs")
		return nil, nil
	}
	apis := newNodeAPIs(r.client, r.d.Nodes)
	for {
		polls := apiclient.PollStatuses(ctx, apis)
		if !slices.ContainsFunc(polls, func(p apiclient.StatusPoll) bool { return p.Status == nil }) {
			break
		}
		for _, p := range r.procs.All() {
			if state := p.ExitState(); state != "" {
				return nil, fmt.Errorf("%s %s before its API answered; its log is %s", p.Name(), state, p.LogFile())
			}
		}
		select {
		case <-ctx.Done():
			return nil, nil // stopped before the nodes were up: a run without txs, not an error
		case <-time.After(nodeUpPoll):
		}
	}
	nodes := make([]load.Node, len(r.d.Nodes))
	for i, n := range r.d.Nodes {
		nodes[i] = load.Node{Name: n.Name, URL: "http://" + n.HTTPAddr}
	}
	f, err := load.New(ctx, nodes, keys, r.client, load.Options{Rate: r.opts.TxRate, TxSize: r.opts.TxSize})
	if err != nil {
		return nil, fmt.Errorf("the firehose: %w", err)
	}
	return f, nil
}

// nodeUpPoll is how often openFirehose asks the nodes whether they answer.
const nodeUpPoll = 250 * time.Millisecond

// load runs the chaos mode and the firehose while supervise prints the
// status lines, until ctx ends or the duration has passed, then stops them.
// It returns the measured span, nil when the run ended in the warm-up.
func (r *devnetRun) load(ctx context.Context) *load.Span {
	onPoll := r.series.Observe
	if r.chaos != nil {
		onPoll = func(at time.Time, polls []apiclient.StatusPoll) {
			r.series.Observe(at, polls)
			r.forks.Observe(at, polls)
		}
	}
	chaosCtx, stopChaos := context.WithCancel(ctx)
	defer stopChaos()
	var chaosRun sync.WaitGroup
	if r.chaos != nil {
		chaosRun.Go(func() { r.chaos.Run(chaosCtx) })
	}
	firehoseCtx, stopFirehose := context.WithCancel(ctx)
	defer stopFirehose()
	var firehoseRun sync.WaitGroup
	if r.firehose != nil {
		firehoseRun.Go(func() { r.firehose.Run(firehoseCtx) })
	}
	r.supervise(ctx, onPoll)
	span, measured := load.NewSpan(r.d.Genesis.SystemStart, r.opts.Warmup, time.Now())
	// The chaos mode stops first, ending a fault under way, so that the
	// firehose can still send again what a killed node dropped.
	stopChaos()
	chaosRun.Wait()
	stopFirehose()
	firehoseRun.Wait()
	if !measured {
		return nil
	}
	return &span
}

// settleTxs is the final check of the firehose's txs, and every node's
// chain; with no firehose, only the chains. Like the last polls for the
// report, it is made before the nodes stop, and not cut short by the run's
// ctx: it is what the report is for, and bounded (the devnet command ends
// at a second Ctrl-C).
func (r *devnetRun) settleTxs(span *load.Span) (*load.Report, []load.ChainWalk) {
	if r.firehose == nil {
		return nil, load.WalkChains(context.Background(), newNodeAPIs(r.client, r.d.Nodes))
	}
	r.firehose.Sweep(context.Background())
	grace := inFlightGrace(r.d.Genesis)
	fmt.Fprintf(r.out, "firehose stopped; giving its last txs up to %v to reach every chain\n", grace.Round(time.Millisecond))
	settled := r.firehose.AwaitInFlight(context.Background(), grace)
	txs, walks := r.firehose.Settle(context.Background(), r.d.Genesis.Clock(), span)
	txs.Settled = settled
	txs.Print(r.out)
	return txs, walks
}

// inFlightGrace is how long the devnet waits, after the firehose stopped,
// for its last txs to reach every node's chain (load.InFlightGrace), with
// g's f (0.1 when it cannot be read).
func inFlightGrace(g *consensus.Genesis) time.Duration {
	slotsPerBlock := 10.0
	if f, err := g.ActiveSlots(); err == nil && f.Sign() > 0 {
		slotsPerBlock, _ = new(big.Rat).Inv(f).Float64()
	}
	return load.InFlightGrace(g.SlotLength(), slotsPerBlock)
}

// stopNodes stops every node and prints how each ended. It returns, by
// node, how it ended when it exited on its own or the chaos mode killed it
// ("" otherwise).
func (r *devnetRun) stopNodes() []string {
	fmt.Fprintln(r.out, "stopping the nodes")
	r.procs.Stop()
	final := r.procs.All()
	exited := make([]string, len(final))
	for i, p := range final {
		fmt.Fprintf(r.out, "%s %s\n", p.Name(), p.ExitState())
		if !p.Unexpected() && !p.Killed() {
			continue
		}
		exited[i] = p.ExitState()
		// A node restarted by hand is not the devnet's child to stop.
		if _, err := fetchStatus(context.Background(), r.client, r.d.Nodes[i].HTTPAddr); err == nil {
			fmt.Fprintf(r.out, "%s was restarted by hand and still runs: stop it yourself\n", p.Name())
		}
	}
	return exited
}

// writeReport writes the report and its plots to Options.ReportFile, if
// any.
func (r *devnetRun) writeReport(rep report.Report) error {
	if r.opts.ReportFile == "" {
		return nil
	}
	return report.Write(r.opts.ReportFile, rep, r.series, r.d.Genesis, r.opts.TxRate, r.out)
}

// supervise prints a status line a second, feeding every poll to the
// chain watch and the live view, until ctx is cancelled or the duration
// (when non-zero) has passed. A node process that exits on its own is
// announced once and shown as down; the devnet keeps running (the user may
// restart it by hand).
//
// onPoll gets every round of polls too, with the time it started.
func (r *devnetRun) supervise(ctx context.Context, onPoll func(time.Time, []apiclient.StatusPoll)) {
	out, d := r.out, r.d
	var deadline <-chan time.Time
	if r.opts.Duration > 0 {
		timer := time.NewTimer(r.opts.Duration)
		defer timer.Stop()
		deadline = timer.C
	}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	names := make([]string, len(d.Nodes))
	for i, n := range d.Nodes {
		names[i] = n.Name
	}
	rate := newOnChainRate(onChainRateWindow(d.Genesis))
	announced := make([]*supervisor.Process, len(d.Nodes)) // the last exit announced, by node
	exitStates := make([]string, len(d.Nodes))
	for {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return
		case <-ticker.C:
		}
		polled := time.Now()
		polls, ebLists := pollRound(ctx, r.client, d.Nodes, r.view)
		if ctx.Err() != nil {
			return // the polls were cut short, not the nodes
		}
		r.watch.Observe(polls)
		onPoll(polled, polls)
		for i, p := range r.procs.All() {
			exitStates[i] = p.ExitState()
			if exitStates[i] != "" && announced[i] != p {
				announced[i] = p
				fmt.Fprintf(out, "%s %s; its log is %s\n", p.Name(), exitStates[i], p.LogFile())
			}
		}
		now := time.Now()
		onChain := maxTxsOnChain(polls)
		rate.observe(now, onChain)
		txs := txLine{OnChain: onChain, PerSecond: rate.perSecond()}
		if r.firehose != nil {
			txs.Submitted = r.firehose.Submitted()
		}
		fmt.Fprintln(out, statusLine(d.Genesis.Clock(), now, names, polls, exitStates, txs))
		if r.view != nil {
			r.view.Observe(liveObservation(polled, polls, ebLists, exitStates, txs))
		}
	}
}

// syncWriter serializes the writes of the supervisor, the chaos scheduler
// and the node restarts to the devnet's output, a line each.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
