package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/spf13/cobra"
)

// mempoolFlags are the flags of leiosbench mempool.
type mempoolFlags struct {
	ApplyCost    time.Duration `json:"apply_cpu_ns"`
	ReapplyCost  time.Duration `json:"reapply_cpu_ns"`
	ReadBase     time.Duration `json:"ledger_read_base_ns"`
	ReadPerKey   time.Duration `json:"ledger_read_per_key_ns"`
	Duration     time.Duration `json:"duration_per_cell_ns"`
	SyncPeriod   time.Duration `json:"tip_change_every_ns"`
	ReadPeriod   time.Duration `json:"read_every_ns"`
	Offered      []int         `json:"offered_tx_s"`
	Peers        []int         `json:"peers"`
	Occupancies  []int         `json:"hold_occupancies"`
	CeilingTxs   int           `json:"ceiling_txs"`
	Quick        bool          `json:"quick"`
	JSON         bool          `json:"-"`
	SkipMatrix   bool          `json:"skip_matrix,omitempty"`
	SkipHoldTest bool          `json:"skip_hold,omitempty"`
}

func newMempoolCommand() *cobra.Command {
	var f mempoolFlags
	cmd := &cobra.Command{
		Use:   "mempool",
		Short: "The double-buffered mempool against a single-lock baseline under concurrent adders, readers and syncs",
		Long: `The mempool benchmark, both mempools in one run.

For each offered load × peer count: one adder per peer, each submitting its
own chains of real signed txs, paced so the adders offer the load in total;
one reader per peer taking a snapshot every --read-every (the longest wait
is the reader stall); a syncer moving the tip every --tip-change-every (a
tip change that invalidates nothing) and syncing the mempool. Every tx goes
through the real ledger.Apply / ledger.Reapply plus a simulated CPU cost
(busy-wait); each ledger read of a key sleeps --read-base + --read-per-key.

The double-buffered mempool (package mempool) and a single-lock baseline
(adds, readers and a resync that revalidates everything all under one lock)
run the same cells one after the other. First the run measures the serial
validation ceiling (adds back to back, nothing else running); last, the lock
hold of one sync at each --hold-occupancies, with adders at the ceiling.

The full run takes about 9 × 2 × --duration plus the hold test; --quick
shrinks it to a smoke run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Quick {
				f.quick(cmd)
			}
			if err := f.validate(); err != nil {
				return err
			}
			report, err := runMempoolBench(cmd.Context(), f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), report, f.JSON)
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&f.ApplyCost, "apply-cpu", 200*time.Microsecond, "simulated CPU cost of a full validation (busy-wait, on top of the real one)")
	fs.DurationVar(&f.ReapplyCost, "reapply-cpu", 20*time.Microsecond, "simulated CPU cost of a revalidation (busy-wait, on top of the real one)")
	fs.DurationVar(&f.ReadBase, "read-base", 500*time.Microsecond, "latency of a ledger read")
	fs.DurationVar(&f.ReadPerKey, "read-per-key", 200*time.Microsecond, "latency of a ledger read per key read")
	fs.DurationVar(&f.Duration, "duration", 20*time.Second, "length of each cell")
	fs.DurationVar(&f.SyncPeriod, "tip-change-every", 5*time.Second, "period of the tip changes")
	fs.DurationVar(&f.ReadPeriod, "read-every", 150*time.Millisecond, "period of each reader's snapshots")
	fs.IntSliceVar(&f.Offered, "offered", []int{100, 1_000, 10_000}, "offered loads, tx/s in total")
	fs.IntSliceVar(&f.Peers, "peers", []int{2, 20, 100}, "peer counts (one adder and one reader each)")
	fs.IntSliceVar(&f.Occupancies, "hold-occupancies", []int{10_000, 56_000}, "txs held when the lock-hold test syncs")
	fs.IntVar(&f.CeilingTxs, "ceiling-txs", 4_000, "adds timed to measure the serial validation ceiling")
	fs.BoolVar(&f.Quick, "quick", false, "a smoke run: 1 s cells, a tip change every 300 ms, hold test at 1,000 / 5,600 txs (explicit flags win)")
	fs.BoolVar(&f.SkipMatrix, "skip-matrix", false, "leave out the load matrix")
	fs.BoolVar(&f.SkipHoldTest, "skip-hold", false, "leave out the lock-hold test")
	fs.BoolVar(&f.JSON, "json", false, "print one JSON document instead of the tables")
	return cmd
}

// quick shrinks the run, leaving flags given explicitly as they are.
func (f *mempoolFlags) quick(cmd *cobra.Command) {
	set := func(name string, apply func()) {
		if !cmd.Flags().Changed(name) {
			apply()
		}
	}
	set("duration", func() { f.Duration = time.Second })
	set("tip-change-every", func() { f.SyncPeriod = 300 * time.Millisecond })
	set("hold-occupancies", func() { f.Occupancies = []int{1_000, 5_600} })
	set("ceiling-txs", func() { f.CeilingTxs = 500 })
}

func (f mempoolFlags) validate() error {
	for _, d := range []time.Duration{f.Duration, f.SyncPeriod, f.ReadPeriod} {
		if d <= 0 {
			return fmt.Errorf("--duration, --tip-change-every and --read-every must be positive")
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
	if f.CeilingTxs <= 0 {
		return fmt.Errorf("--ceiling-txs must be positive")
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
	r := &mempoolReport{Settings: f, GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	nChains, length := f.chainShape()
	fmt.Fprintf(progress, "building %d chains of %d signed txs…\n", nChains, length)
	t0 := time.Now()
	chains, err := buildMPChains(ctx, nChains, length)
	if err != nil {
		return nil, fmt.Errorf("building txs: %w", err)
	}
	r.TxBytes = chains.chains[0][0].Size()
	fmt.Fprintf(progress, "built %d txs of %d bytes in %s\n", nChains*length, r.TxBytes, time.Since(t0).Round(time.Millisecond))

	costs := &mpCosts{readBase: f.ReadBase, readPerKey: f.ReadPerKey}
	costs.apply.Store(int64(f.ApplyCost))
	costs.reapply.Store(int64(f.ReapplyCost))
	r.CeilingTxS, err = measureCeiling(ctx, chains, costs, f.CeilingTxs)
	if err != nil {
		return nil, fmt.Errorf("measuring the ceiling: %w", err)
	}
	fmt.Fprintf(progress, "serial validation ceiling: %.0f tx/s\n", r.CeilingTxS)

	if !f.SkipMatrix {
		for _, offered := range f.Offered {
			for _, peers := range f.Peers {
				for _, kind := range []string{mpDouble, mpSingle} {
					runtime.GC()
					c, err := runMPCell(ctx, kind, chains, costs, offered, peers, f.Duration, f.ReadPeriod, f.SyncPeriod)
					if err != nil {
						return nil, fmt.Errorf("%s, %d tx/s, %d peers: %w", kind, offered, peers, err)
					}
					c.ExpectedTxS = math.Min(float64(offered), r.CeilingTxS)
					fmt.Fprintf(progress, "%-15s %6d tx/s %3d peers: stall %s, %.0f tx/s, %d held, %d syncs (lock ≤ %s)\n",
						kind, offered, peers, fmtDur(time.Duration(c.MaxReaderStallNs)), c.ThroughputTxS, c.OccupancyTxs, c.Syncs, fmtDur(time.Duration(c.MaxSyncLockHoldNs)))
					r.Cells = append(r.Cells, c)
				}
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
				fmt.Fprintf(progress, "%-15s sync at %d txs: lock held %s, reader stall %s\n", kind, h.HeldTxs, fmtDur(time.Duration(h.LockHeldNs)), fmtDur(time.Duration(h.MaxReaderStallNs)))
				r.Holds = append(r.Holds, h)
			}
		}
	}
	r.judge()
	return r, nil
}
