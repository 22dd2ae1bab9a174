// Package mempool is leiosbench mempool: the node's double-buffered
// mempool beside a single-lock baseline (in this package), each under the
// same adders, the forge's and tx submission's real walks and blocks, on
// the simulated chain of lab/bench/txchains.
//
// Invariants: both mempools get the same txs in the same order and cell
// settings; a walk's stall is reported beside what the runtime and the
// machine did meanwhile; every figure of the tables is in the JSON report.
// It never builds a node: it reaches the mempool through the node's
// adapters, as tx submission and the forge see it.
package mempool

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/lab/bench/txchains"
)

// mempoolFlags are the flags of leiosbench mempool.
type mempoolFlags struct {
	ApplyCost    time.Duration `json:"apply_cpu_ns"`
	ReapplyCost  time.Duration `json:"reapply_cpu_ns"`
	ReadBase     time.Duration `json:"ledger_view_open_ns"`
	ReadPerKey   time.Duration `json:"ledger_read_per_key_ns"`
	Duration     time.Duration `json:"duration_per_cell_ns"`
	SyncPeriod   time.Duration `json:"block_every_ns"`
	ReadPeriod   time.Duration `json:"serve_walk_every_ns"`
	ForgePeriod  time.Duration `json:"forge_walk_every_ns"`
	Offered      []int         `json:"offered_tx_s"`
	Peers        []int         `json:"peers"`
	Occupancies  []int         `json:"hold_occupancies"`
	CeilingTxs   int           `json:"ceiling_txs"`
	Quick        bool          `json:"quick"`
	SkipMatrix   bool          `json:"skip_matrix,omitempty"`
	SkipHoldTest bool          `json:"skip_hold,omitempty"`
	Mempools     []string      `json:"mempools"`
	Trace        string        `json:"trace,omitempty"`
	out          output.Flags
}

// NewCommand is the mempool command.
func NewCommand() *cobra.Command {
	var f mempoolFlags
	cmd := &cobra.Command{
		Use:   "mempool",
		Short: "The double-buffered mempool against a single-lock baseline under adders, the forge's and tx submission's walks, and blocks",
		Long: `The mempool benchmark, both mempools in one run.

For each offered load × peer count, on a fresh mempool and ledger:
  adders      one per peer, each submitting its own chains of real signed
              txs, paced so the adders offer the load in total;
  tx-submission walks
              one per peer, every --read-every: the ids after the peer's
              cursor, a window of 100 (TxsAfter, through the node's adapter
              for the double-buffered mempool), then each of those txs
              (Lookup), as the peer asks for them;
  the forge   every --forge-every: the tip's ledger, one snapshot, and the
              forge's own selection (forge.SelectTxs) up to an RB body,
              every tx reapplied on the tip's ledger;
  the chain   every --tip-change-every a block is adopted — an RB and its
              EB, certified, selected by the forge's walk from the latest
              snapshot up to the prototype's limits — and the mempool syncs
              to it, dropping the block's txs: it drains as blocks come, and
              its occupancy stays what the load makes it.
Every tx goes through the real ledger.Apply / ledger.Reapply plus a
simulated CPU cost (busy-wait); opening a view of the ledger sleeps
--read-base, and each key read through it --read-per-key.

A reader's stall is the time it spent in the mempool's calls: the forge's
snapshot, a walk's TxsAfter and Lookups (the forge's reapplying is its own
work, reported apart). Beside it, what stalls any goroutine: after each
walk, in the same goroutine and timed the same way, a control walk reads
the same window from a private slice and map, repeated to take as long as
the walk typically does; and per cell the Go scheduler's longest wait for a
P (runtime/metrics /sched/latencies), the GC cycles and the allocation rate
that paced them, and the OS run delay of the process's threads (the
machine's other load). --trace writes an execution trace of the matrix (each
cell a task, each read a region: "serve walk", "control walk", "forge
snapshot"; CPU samples included) and prints where the reads over 1 ms spent
their time: running (and whether the CPU profiler saw them on a CPU),
runnable waiting for a P, or blocked, by the runtime's reason. The double-buffered mempool (package mempool) and a
single-lock baseline (adds, readers and a resync that revalidates
everything all under one lock) run the same cells one after the other.
First the run measures the serial validation ceiling (adds back to back,
nothing else running); last, the lock hold of one sync at each
--hold-occupancies, with adders at the ceiling.

The full run takes about 9 × 2 × --duration plus the hold test (about 7
minutes); --quick shrinks it to seconds. The plot (mempool.png in --plots)
shows the reader stall and the throughput of every cell.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Quick {
				f.quick(cmd)
			}
			if err := f.validate(); err != nil {
				return err
			}
			if err := f.out.MakePlotsDir(); err != nil {
				return err
			}
			report, err := runMempoolBench(cmd.Context(), f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return f.out.Emit(cmd, report, map[string]func(string) error{
				"mempool.png": func(path string) error { return plotMempool(report, path) },
			})
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&f.ApplyCost, "apply-cpu", 200*time.Microsecond, "simulated CPU cost of a full validation (busy-wait, on top of the real one)")
	fs.DurationVar(&f.ReapplyCost, "reapply-cpu", 20*time.Microsecond, "simulated CPU cost of a revalidation (busy-wait, on top of the real one)")
	fs.DurationVar(&f.ReadBase, "read-base", 500*time.Microsecond, "latency of opening a view of the ledger")
	fs.DurationVar(&f.ReadPerKey, "read-per-key", 200*time.Microsecond, "latency of each key read from the ledger")
	fs.DurationVar(&f.Duration, "duration", 20*time.Second, "length of each cell")
	fs.DurationVar(&f.SyncPeriod, "tip-change-every", 5*time.Second, "period of the blocks adopted (each a tip change and a sync)")
	fs.DurationVar(&f.ReadPeriod, "read-every", 150*time.Millisecond, "period of each peer's tx-submission walk")
	fs.DurationVar(&f.ForgePeriod, "forge-every", time.Second, "period of the forge's walk (a slot)")
	fs.IntSliceVar(&f.Offered, "offered", []int{100, 1_000, 10_000}, "offered loads, tx/s in total")
	fs.IntSliceVar(&f.Peers, "peers", []int{2, 20, 100}, "peer counts (one adder and one tx-submission walk each)")
	fs.IntSliceVar(&f.Occupancies, "hold-occupancies", []int{10_000, 56_000}, "txs held when the lock-hold test syncs")
	fs.IntVar(&f.CeilingTxs, "ceiling-txs", 4_000, "adds timed to measure the serial validation ceiling")
	fs.BoolVar(&f.Quick, "quick", false, "a run of seconds: 1,000 and 10,000 tx/s × 2 and 20 peers, 1 s cells, a block every 250 ms, the forge every 200 ms, hold test at 1,000 / 5,600 txs (explicit flags win)")
	fs.BoolVar(&f.SkipMatrix, "skip-matrix", false, "leave out the load matrix")
	fs.BoolVar(&f.SkipHoldTest, "skip-hold", false, "leave out the lock-hold test")
	fs.StringSliceVar(&f.Mempools, "mempools", []string{mpDouble, mpSingle}, "the mempools run in each cell")
	fs.StringVar(&f.Trace, "trace", "", "write a Go execution trace of the load matrix to this file, and print where the slow reads spent their time")
	f.out.Register(fs)
	return cmd
}

// quick shrinks the run, leaving flags given explicitly as they are.
func (f *mempoolFlags) quick(cmd *cobra.Command) {
	set := func(name string, apply func()) { output.UnlessGiven(cmd, name, apply) }
	set("offered", func() { f.Offered = []int{1_000, 10_000} })
	set("peers", func() { f.Peers = []int{2, 20} })
	set("duration", func() { f.Duration = time.Second })
	set("tip-change-every", func() { f.SyncPeriod = 250 * time.Millisecond })
	set("forge-every", func() { f.ForgePeriod = 200 * time.Millisecond })
	set("hold-occupancies", func() { f.Occupancies = []int{1_000, 5_600} })
	set("ceiling-txs", func() { f.CeilingTxs = 500 })
}

func (f mempoolFlags) validate() error {
	for _, d := range []time.Duration{f.Duration, f.SyncPeriod, f.ReadPeriod, f.ForgePeriod} {
		if d <= 0 {
			return fmt.Errorf("--duration, --tip-change-every, --read-every and --forge-every must be positive")
		}
	}
	if f.ApplyCost < 0 || f.ReapplyCost < 0 || f.ReadBase < 0 || f.ReadPerKey < 0 {
		return fmt.Errorf("costs must not be negative")
	}
	for _, xs := range [][]int{f.Offered, f.Peers, f.Occupancies} {
		for _, x := range xs {
			if x <= 0 {
				return fmt.Errorf("--offered, --peers and --hold-occupancies take positive numbers")
			}
		}
	}
	for _, kind := range f.Mempools {
		if kind != mpDouble && kind != mpSingle {
			return fmt.Errorf("--mempools: %q is neither %s nor %s", kind, mpDouble, mpSingle)
		}
	}
	if f.CeilingTxs <= 0 {
		return fmt.Errorf("--ceiling-txs must be positive")
	}
	if !f.SkipMatrix && f.SyncPeriod >= f.Duration {
		return fmt.Errorf("--tip-change-every %s: a cell of %s would have no block and no sync", f.SyncPeriod, f.Duration)
	}
	return nil
}

// chainShape sizes the pool of tx chains: one chain per peer of the largest
// peer count (at least 100, so the hold test has chains for its adders), each
// long enough for the busiest cell — the offered load, capped by an upper
// bound of the ceiling (one tx per apply cost) — and for the hold test.
func (f mempoolFlags) chainShape() (chains, length int) {
	chains = 100
	for _, p := range f.Peers {
		chains = max(chains, p)
	}
	need := 0
	if !f.SkipMatrix {
		for _, o := range f.Offered {
			rate := float64(o)
			if f.ApplyCost > 0 {
				rate = math.Min(rate, float64(time.Second)/float64(f.ApplyCost))
			}
			need = max(need, int(rate*f.Duration.Seconds()*1.1))
		}
	}
	if !f.SkipHoldTest {
		for _, n := range f.Occupancies {
			need = max(need, n*3/2+chains*8)
		}
	}
	need = max(need, f.CeilingTxs)
	return chains, (need+chains-1)/chains + 1
}

func runMempoolBench(ctx context.Context, f mempoolFlags, progress io.Writer) (*mempoolReport, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	r := &mempoolReport{Settings: f, Machine: machine.Describe()}
	nChains, length := f.chainShape()
	fmt.Fprintf(progress, "building %d chains of %d signed txs…\n", nChains, length)
	t0 := time.Now()
	chains, err := txchains.Build(ctx, nChains, length)
	if err != nil {
		return nil, fmt.Errorf("building txs: %w", err)
	}
	r.TxBytes = chains.Txs[0][0].Size()
	fmt.Fprintf(progress, "built %d txs of %d bytes in %s\n", nChains*length, r.TxBytes, time.Since(t0).Round(time.Millisecond))

	costs := &txchains.Costs{ReadBase: f.ReadBase, ReadPerKey: f.ReadPerKey}
	costs.Apply.Store(int64(f.ApplyCost))
	costs.Reapply.Store(int64(f.ReapplyCost))
	r.CeilingTxS, err = measureCeiling(ctx, chains, costs, f.CeilingTxs, 3)
	if err != nil {
		return nil, fmt.Errorf("measuring the ceiling: %w", err)
	}
	fmt.Fprintf(progress, "serial validation ceiling: %.0f tx/s\n", r.CeilingTxS)

	if !f.SkipMatrix {
		stopTrace := func() {}
		if f.Trace != "" {
			stop, err := startTrace(f.Trace)
			if err != nil {
				return nil, err
			}
			stopTrace = sync.OnceFunc(stop)
			defer stopTrace()
		}
		for _, offered := range f.Offered {
			for _, peers := range f.Peers {
				for _, kind := range f.Mempools {
					runtime.GC()
					c, err := runMPCell(ctx, kind, chains, costs, mpCellSettings{
						offered: offered, peers: peers, duration: f.Duration,
						readPeriod: f.ReadPeriod, forgePeriod: f.ForgePeriod, tip: f.SyncPeriod,
					})
					if err != nil {
						return nil, fmt.Errorf("%s, %d tx/s, %d peers: %w", kind, offered, peers, err)
					}
					c.ExpectedTxS = math.Min(float64(offered), r.CeilingTxS)
					fmt.Fprintf(progress, "%-15s %6d tx/s %3d peers: stall %s, %d walks > 1 ms (control %s, %d; longest wait for a P %s, %d GCs), %.0f tx/s, %d syncs, ≤ %d held (lock ≤ %s)\n",
						kind, offered, peers, output.Duration(time.Duration(c.MaxReaderStallNs)), c.ServeStall.Over1ms, output.Duration(time.Duration(c.ControlStall.MaxNs)), c.ControlStall.Over1ms,
						output.Duration(time.Duration(c.Machine.MaxSchedLatencyNs)), c.Machine.GCCycles,
						c.ThroughputTxS, c.Syncs, c.MaxOccupancyTxs, output.Duration(time.Duration(c.MaxSyncLockHoldNs)))
					r.Cells = append(r.Cells, c)
				}
			}
		}
		if f.Trace != "" {
			stopTrace()
			if r.Trace, err = analyzeMPTrace(f.Trace); err != nil {
				return nil, fmt.Errorf("--trace: %w", err)
			}
		}
	}
	if !f.SkipHoldTest {
		for _, n := range f.Occupancies {
			for _, kind := range []string{mpDouble, mpSingle} {
				runtime.GC()
				h, err := runMPHold(ctx, kind, chains, costs, n, 20, f.ReadPeriod, 300*time.Millisecond)
				if err != nil {
					return nil, fmt.Errorf("hold test, %s at %d txs: %w", kind, n, err)
				}
				fmt.Fprintf(progress, "%-15s sync at %d txs: lock held %s, reader stall %s\n", kind, h.HeldTxs, output.Duration(time.Duration(h.LockHeldNs)), output.Duration(time.Duration(h.MaxReaderStallNs)))
				r.Holds = append(r.Holds, h)
			}
		}
	}
	r.judge()
	return r, nil
}
