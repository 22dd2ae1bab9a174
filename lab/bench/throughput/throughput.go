// Package throughput is leiosbench throughput: offered tx rate against
// txs on chain, one fresh devnet (lab/devnet, a leiosnode process per
// node) per rate fed by the firehose, checked as the devnet report checks
// it, beside the CPU floor of a tx; with --hog, a busy loop (this binary's
// hidden hog command) takes one core meanwhile.
//
// Invariants: every rate runs on a fresh devnet; the busy loop dies with
// the bench (the parent-death signal on Linux); every figure of the table
// is in the JSON report.
// It never builds a node in this process: the nodes are processes watched
// through their HTTP API.
package throughput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/bench/nodebin"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/lab/devnet"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/devnet/report"
	"github.com/leiosnode/leiosnode/lab/load"
)

type throughputFlags struct {
	rates       string
	sustainable float64
	duration    time.Duration
	warmup      time.Duration
	quick       bool
	hog         bool
	nodes       int
	leiosnode   string
	plot        string
	keepDirs    bool
	json        string
}

// The rates a run offers are multiples of the rate this machine sustains
// (--sustainable): below it, at it, and past it, so that the reader sees
// whether the curve flattens into a plateau or falls off a cliff.
var (
	rateMultiples      = []float64{0.5, 1, 2, 3}
	quickRateMultiples = []float64{0.5, 1, 2}
)

// defaultSustainable is about what this project's 2-core machine sustains.
const defaultSustainable = 1000

// The --quick run: CI-sized, a few minutes in all.
const (
	quickDuration = 45 * time.Second
	quickWarmup   = 15 * time.Second
)

// NewCommand is the throughput command.
func NewCommand() *cobra.Command {
	var f throughputFlags
	cmd := &cobra.Command{
		Use:   "throughput",
		Short: "Offered tx rate against txs on chain: one devnet per rate, a table and a plot",
		Long: `For each rate, a fresh devnet of --nodes nodes (each its own leiosnode
process, on loopback, with the devnet template) is fed by the firehose at
that rate for --duration, then checked as 'leiosnode devnet --report'
checks it. The figures are those of the measured span, from the system
start plus --warmup to the firehose's stop.

The rates are --rates, or else --sustainable × 0.5, 1, 2, 3: past what the
machine sustains, the nodes' edges should refuse what they cannot take, and
the chain keep its rate (a plateau, not a cliff).

The table gives per rate what the firehose offered (distinct txs a second),
what the nodes admitted and refused (503 answers a second), what reached the
common chain a second, the share of its EBs certified and the fewest
certified in a 30 s window, the p95 submit-to-chain latency, the txs lost,
the longest a node's mempool stayed at 90 % of its byte bound or more, and
the nodes' CPU per 1,000 txs on chain beside the floor (one decode, one full
apply with its ed25519 witness check, one reapply, on one core) measured in
the same run. The plot (--plot) shows on-chain rate, certified share, p95
latency and refused rate against the offered rate.

Every node and the firehose share this machine's cores; --hog takes one of
them with a busy loop in another process for each run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.quick {
				output.UnlessGiven(cmd, "duration", func() { f.duration = quickDuration })
				output.UnlessGiven(cmd, "warmup", func() { f.warmup = quickWarmup })
			}
			rates, err := f.offeredRates()
			if err != nil {
				return err
			}
			if err := f.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			report, err := runThroughput(ctx, f, rates, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := output.Print(cmd, report, f.json); err != nil {
				return err
			}
			if f.plot == "" {
				return nil
			}
			if err := plotThroughput(report, f.plot); err != nil {
				return fmt.Errorf("--plot %s: %w", f.plot, err)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "plot written to", f.plot)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.rates, "rates", "", "offered rates, tx/s, comma-separated (default: --sustainable × 0.5, 1, 2, 3; × 0.5, 1, 2 with --quick)")
	fs.Float64Var(&f.sustainable, "sustainable", defaultSustainable, "the rate this machine sustains, tx/s, that the default rates are multiples of")
	fs.DurationVar(&f.duration, "duration", 180*time.Second, "how long each devnet runs")
	fs.DurationVar(&f.warmup, "warmup", 60*time.Second, "the part of each run, from its system start, left out of its figures")
	fs.BoolVar(&f.quick, "quick", false, fmt.Sprintf("a CI-sized run: %v per rate, %v warm-up, three rates", quickDuration, quickWarmup))
	fs.BoolVar(&f.hog, "hog", false, "take one core with a busy loop in another process during each run")
	fs.IntVar(&f.nodes, "nodes", 3, "nodes per devnet")
	fs.StringVar(&f.leiosnode, "leiosnode", "", "the leiosnode binary the nodes run (default: built from this module into a temporary directory)")
	fs.StringVar(&f.plot, "plot", "throughput.png", "where to write the plot (\"\" for none)")
	fs.BoolVar(&f.keepDirs, "keep", false, "keep each devnet's directory (node logs, report and its plots)")
	fs.StringVar(&f.json, "json", "", "also write the report, every figure of the table, to this JSON file")
	return cmd
}

// offeredRates are --rates, or --sustainable's multiples.
func (f throughputFlags) offeredRates() ([]float64, error) {
	if f.rates != "" {
		return parseRates(f.rates)
	}
	if f.sustainable <= 0 {
		return nil, fmt.Errorf("--sustainable %g: must be a positive rate", f.sustainable)
	}
	multiples := rateMultiples
	if f.quick {
		multiples = quickRateMultiples
	}
	rates := make([]float64, len(multiples))
	for i, m := range multiples {
		rates[i] = m * f.sustainable
	}
	return rates, nil
}

func (f throughputFlags) validate() error {
	switch {
	case f.nodes < 1:
		return errors.New("--nodes must be at least 1")
	case f.warmup < 0:
		return fmt.Errorf("--warmup %v: must not be negative", f.warmup)
	case f.duration <= f.warmup:
		return fmt.Errorf("--duration %v must be longer than --warmup %v: the figures are measured after it", f.duration, f.warmup)
	}
	return nil
}

func parseRates(s string) ([]float64, error) {
	var rates []float64
	for _, field := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("--rates: %q is not a positive rate", field)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// throughputReport is one devnet's outcome per rate.
type throughputReport struct {
	Nodes    int                 `json:"nodes"`
	Duration string              `json:"duration"`
	Warmup   string              `json:"warmup"`
	Hog      bool                `json:"hog"`
	Machine  machine.Description `json:"machine"`
	Cells    []throughputCell    `json:"cells"`
	Measured string              `json:"measured"`
	// Floor says what the floor is, in words.
	Floor string `json:"floor"`
}

// throughputCell is one rate's run: its figures over the measured span
// (report.Targets and report.CPUReport), lost over the whole run.
type throughputCell struct {
	Rate    float64 `json:"rate"` // asked of the firehose, tx/s
	LoadAvg string  `json:"loadAvg,omitempty"`
	// The firehose's distinct txs sent, admitted and refused (503
	// answers), and the txs reaching the common chain, per second.
	Offered          float64 `json:"offered"`
	Admitted         float64 `json:"admitted"`
	RefusedPerSecond float64 `json:"refusedPerSecond"`
	OnChain          float64 `json:"onChain"`
	// EBs of the common chain in the span, their certified share, and the
	// EBs certified in each 30 s window of it and the fewest.
	EBsAnnounced       int     `json:"ebsAnnounced"`
	EBsCertified       int     `json:"ebsCertified"`
	CertifiedShare     float64 `json:"certifiedShare"`
	CertifiedPer30s    []int   `json:"certifiedPer30s"`
	MinCertifiedPer30s int     `json:"minCertifiedPer30s"`
	// Submit to on chain, over the txs first sent in the span.
	LatencyP50Ms int64  `json:"latencyP50Ms"`
	LatencyP95Ms int64  `json:"latencyP95Ms"`
	Lost         uint64 `json:"lost"`      // the whole run
	InMempool    uint64 `json:"inMempool"` // at the end
	// MempoolPinnedSeconds is the longest a node's mempool held 90 % of
	// its byte bound or more; nil when the nodes gave no bound.
	MempoolPinnedSeconds *float64          `json:"mempoolPinnedSeconds,omitempty"`
	RefusedByNodes       map[string]uint64 `json:"refusedByNodes,omitempty"`
	// CPU seconds per 1,000 txs on chain: the nodes' mean, the floor, and
	// their ratio.
	CPUPerKTx    float64 `json:"cpuPerKTx"`
	FloorPerKTx  float64 `json:"floorPerKTx"`
	RatioToFloor float64 `json:"ratioToFloor"`
	// HogCores is the cores the busy loop took, with --hog.
	HogCores float64 `json:"hogCores,omitempty"`
	Dir      string  `json:"dir,omitempty"` // kept with --keep
}

const throughputMeasured = "per rate, one fresh devnet, its nodes and the firehose sharing this machine's cores; " +
	"figures over the measured span, from the system start plus the warm-up to the firehose's stop: " +
	"offered, admitted, refused/s = the firehose's distinct txs sent, admitted, 503 answers per second; " +
	"on chain = txs of the common chain's blocks whose slot started in the span, per second; " +
	"cert share = certified / announced EBs of the common chain in the span; cert/30s = the fewest certified in a 30 s window of it; " +
	"p95 = submission to the slot start of the block that applied the tx, over the txs first sent in the span; lost = the whole run; " +
	"pinned = the longest a node's mempool held ≥ 90 % of its byte bound (status polled once a second); " +
	"CPU/1k = the nodes' mean CPU seconds (processCpuSeconds) per 1,000 txs reaching their chains; floor = measured in the same run, after its nodes stopped"

func runThroughput(ctx context.Context, f throughputFlags, rates []float64, log io.Writer) (*throughputReport, error) {
	exe := f.leiosnode
	if exe == "" {
		built, cleanup, err := nodebin.Build(ctx)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		exe = built
	}
	template, err := layout.LoadTemplate("")
	if err != nil {
		return nil, err
	}
	r := &throughputReport{Nodes: f.nodes, Duration: f.duration.String(), Warmup: f.warmup.String(), Hog: f.hog,
		Machine: machine.Describe(), Measured: throughputMeasured, Floor: report.FloorDefinition}
	for _, rate := range rates {
		cell, err := runThroughputRate(ctx, f, exe, template, rate, log)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "  offered %.0f tx/s, refused %.0f/s, on chain %.0f tx/s, %.0f %% of EBs certified, p95 %.1f s, CPU per 1,000 txs %.3f s = %.1f× the floor\n",
			cell.Offered, cell.RefusedPerSecond, cell.OnChain, 100*cell.CertifiedShare, float64(cell.LatencyP95Ms)/1000, cell.CPUPerKTx, cell.RatioToFloor)
		r.Cells = append(r.Cells, cell)
		if ctx.Err() != nil {
			break
		}
	}
	return r, nil
}

// runThroughputRate runs one devnet at rate and reads its figures; with
// --hog, a busy loop takes a core for as long as the devnet runs, and is
// stopped whatever happens.
func runThroughputRate(ctx context.Context, f throughputFlags, exe string, template layout.Template, rate float64, log io.Writer) (throughputCell, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("leiosbench-throughput-%g-", rate))
	if err != nil {
		return throughputCell{}, err
	}
	reportFile := filepath.Join(dir, "report.json")
	loadAvg := machine.LoadAverage()
	fmt.Fprintf(log, "rate %g tx/s: devnet in %s for %s (warm-up %s)\n", rate, dir, f.duration, f.warmup)
	var hog *busyLoop
	if f.hog {
		if hog, err = startBusyLoop(); err != nil {
			return throughputCell{}, fmt.Errorf("rate %g: --hog: %w", rate, err)
		}
		defer hog.stop() // an early return, a panic: the loop must not outlive the run
		fmt.Fprintf(log, "  a busy loop (pid %d) takes a core\n", hog.pid)
	}
	runErr := devnet.Run(ctx, devnet.Options{
		Spec: layout.Spec{
			Dir: filepath.Join(dir, "devnet"), Nodes: f.nodes, Funded: load.FundedFor(rate),
			Template: template, SystemStart: time.Now().Add(3 * time.Second),
		},
		NodeExecutable: exe,
		Duration:       f.duration,
		Warmup:         f.warmup,
		TxRate:         rate,
		ReportFile:     reportFile,
	}, io.Discard)
	var hogCores float64
	if hog != nil {
		hogCores = hog.stop()
	}
	cell, err := readThroughputCell(reportFile, rate)
	if err == nil && runErr != nil {
		err = runErr
	}
	if err != nil {
		return throughputCell{}, fmt.Errorf("rate %g: %w (devnet kept in %s)", rate, err, dir)
	}
	cell.LoadAvg, cell.HogCores = loadAvg, hogCores
	if f.keepDirs {
		cell.Dir = dir
	} else if err := os.RemoveAll(dir); err != nil {
		return throughputCell{}, err
	}
	return cell, nil
}

func readThroughputCell(path string, rate float64) (throughputCell, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return throughputCell{}, err
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return throughputCell{}, fmt.Errorf("report %s: %w", path, err)
	}
	t := rep.Targets
	if rep.Txs == nil || t == nil || rep.CPU == nil {
		return throughputCell{}, errors.New("the report has no txs, targets or CPU section (did the run outlast its warm-up?)")
	}
	cell := throughputCell{
		Rate: rate, Offered: t.OfferedPerSecond, Admitted: t.AdmittedPerSecond, RefusedPerSecond: t.RefusedPerSecond, OnChain: t.OnChainPerSecond,
		EBsAnnounced: t.EBsAnnounced, EBsCertified: t.EBsCertified, CertifiedShare: t.CertifiedShare, CertifiedPer30s: t.CertifiedPer30s,
		Lost: rep.Txs.Lost, InMempool: rep.Txs.InMempoolAtEnd, RefusedByNodes: t.RefusedByNodes,
		CPUPerKTx: rep.CPU.MeanSecondsPerKTx, RatioToFloor: rep.CPU.RatioToFloor,
	}
	if len(t.CertifiedPer30s) > 0 {
		cell.MinCertifiedPer30s = slices.Min(t.CertifiedPer30s)
	}
	if l := t.Latency; l != nil {
		cell.LatencyP50Ms, cell.LatencyP95Ms = l.P50Ms, l.P95Ms
	}
	if p := t.MempoolPinned; p != nil {
		seconds := p.Seconds
		cell.MempoolPinnedSeconds = &seconds
	}
	if fl := rep.CPU.Floor; fl != nil {
		cell.FloorPerKTx = fl.FloorSecondsPerKTx
	}
	return cell, nil
}

func (r *throughputReport) Write(w io.Writer) {
	hog := ""
	if r.Hog {
		hog = ", one core taken by a busy loop in another process"
	}
	fmt.Fprintf(w, "== throughput: %d nodes, %s per rate, figures after a %s warm-up%s ==\n", r.Nodes, r.Duration, r.Warmup, hog)
	r.Machine.Write(w)
	fmt.Fprintf(w, "%6s %8s %8s %9s %8s %6s %9s %6s %5s %8s %8s %7s %6s\n",
		"rate", "offered", "admitted", "refused/s", "on chain", "cert", "cert/30s", "p95 s", "lost", "pinned s", "CPU/1k s", "floor s", "ratio")
	for _, c := range r.Cells {
		pinned := "-"
		if c.MempoolPinnedSeconds != nil {
			pinned = fmt.Sprintf("%.0f", *c.MempoolPinnedSeconds)
		}
		fmt.Fprintf(w, "%6.0f %8.0f %8.0f %9.1f %8.0f %5.0f%% %9d %6.2f %5d %8s %8.3f %7.3f %5.1f×\n",
			c.Rate, c.Offered, c.Admitted, c.RefusedPerSecond, c.OnChain, 100*c.CertifiedShare, c.MinCertifiedPer30s,
			float64(c.LatencyP95Ms)/1000, c.Lost, pinned, c.CPUPerKTx, c.FloorPerKTx, c.RatioToFloor)
	}
	for _, c := range r.Cells {
		var notes []string
		if len(c.RefusedByNodes) > 0 {
			notes = append(notes, "refused by the nodes: "+countsByReason(c.RefusedByNodes))
		}
		if c.HogCores > 0 {
			notes = append(notes, fmt.Sprintf("the busy loop took %.2f cores", c.HogCores))
		}
		if c.LoadAvg != "" {
			notes = append(notes, "load average before "+c.LoadAvg)
		}
		fmt.Fprintf(w, "  rate %g: %s\n", c.Rate, strings.Join(notes, "; "))
	}
	fmt.Fprintln(w, "measured:", r.Measured)
	fmt.Fprintln(w, "floor:", r.Floor)
}

// countsByReason spells counts as "queue-delay 12, mempool-full 3", by
// reason.
func countsByReason(counts map[string]uint64) string {
	var parts []string
	for _, reason := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", reason, counts[reason]))
	}
	return strings.Join(parts, ", ")
}
