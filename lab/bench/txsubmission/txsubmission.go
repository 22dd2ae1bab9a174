// Package txsubmission is leiosbench txsubmission: one node's mempool
// served to 2 to 100 pulling peers over the tx-submission protocol, CPU
// per tx served, beside a lock-per-item baseline (in this package) that
// serves the same txs.
//
// Invariants: both servers serve the same load, added and held, from the
// simulated chain of lab/bench/txchains; every figure of the tables
// is in the JSON report.
// It never builds a node: it serves the mempool through the node's
// adapter, as the node does.
package txsubmission

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/lab/bench/txchains"
)

// tsFlags are the flags of leiosbench txsubmission.
type tsFlags struct {
	Offered  []int         `json:"offered_tx_s"`
	Peers    []int         `json:"peers"`
	Duration time.Duration `json:"window_ns"`
	WarmUp   time.Duration `json:"warm_up_ns"`
	Blocks   time.Duration `json:"block_every_ns"`
	Held     int           `json:"held"`
	quick    bool
	out      output.Flags
}

// NewCommand is the txsubmission command.
func NewCommand() *cobra.Command {
	var f tsFlags
	cmd := &cobra.Command{
		Use:   "txsubmission",
		Short: "One node's mempool served to 2 to 100 pulling peers: CPU per tx served, lock-free against a lock per tx",
		Long: `The tx-submission serving benchmark: one node's mempool, fed at a rate,
served to N peers that pull from it, each through the real tx-submission
protocol — the node's txsubmission.Client over the node's mempool adapter
on one end, a peer's txsubmission.Server on the other, the protocol engine
between — over one loopback TCP connection per peer, all in this process.

The node's mempool is the real one (full validation of real signed txs,
from a local adder paced to --offered), and every --block-every a block
takes all the adder added, so it drains as on a chain. Beside those it
holds --held txs that wait for a later block for the whole cell, which
every peer already has: the standing occupancy of a mempool between
blocks (a Leios mempool holds up to 4 × (RB body + EB closure), some
160,000 txs of 300 bytes; on mainnet's 20 s between blocks, 4,000 tx/s
leave 40,000 waiting on average). The node's walk offers each to each
peer once, before the window opens; the lock-per-item walk's cache has
them as sent to every peer, so its walks pass them, a lock each, as the
seed's passed its pool of txs already broadcast. The peers keep what they pull in a set, without
validating it again: they are the load, not what is measured.

Two ways of serving, side by side at each rate and peer count:
  lock-free      the node's: each peer's walk reads the snapshot after its
                 cursor, no lock per tx;
  lock-per-item  the bug of the seed's broadcast: each peer's walk goes
                 through every tx the mempool holds, oldest first, checking
                 each against a dedup cache shared by all peers under its
                 mutex, and records each tx it keeps under it again; a tx
                 asked for is looked up under it, and each add takes it too.
For each cell, after a warm-up: the txs the peers received, the process's
CPU time per tx served (and net of what the adds alone cost, measured in
the same run with no peers), and the latency of the add path. The plot
(txsubmission.png in --plots) draws CPU per tx served against peers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.quick {
				f.applyQuick(cmd)
			}
			if err := f.validate(); err != nil {
				return err
			}
			if err := f.out.MakePlotsDir(); err != nil {
				return err
			}
			report, err := runTSBench(cmd.Context(), f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return f.out.Emit(cmd, report, map[string]func(string) error{
				"txsubmission.png": func(path string) error { return plotTxSubmission(report, path) },
			})
		},
	}
	fs := cmd.Flags()
	fs.IntSliceVar(&f.Offered, "offered", []int{1_000, 4_000}, "tx/s added to the node's mempool")
	fs.IntSliceVar(&f.Peers, "peers", []int{2, 20, 100}, "peers pulling from the node")
	fs.DurationVar(&f.Duration, "duration", 10*time.Second, "measured window of each cell")
	fs.DurationVar(&f.WarmUp, "warm-up", 2*time.Second, "time each cell runs before its window")
	fs.DurationVar(&f.Blocks, "block-every", 2*time.Second, "period of the blocks that take all the adder added")
	fs.IntVar(&f.Held, "held", 20_000, "txs held for the whole cell, waiting for a later block, that every peer already has")
	fs.BoolVar(&f.quick, "quick", false, "a run of seconds: 1,000 tx/s, 2 and 20 peers, 2 s windows after 0.5 s, 1,000 held (explicit flags win)")
	f.out.Register(fs)
	return cmd
}

// applyQuick shrinks the run, leaving flags given explicitly as they are.
func (f *tsFlags) applyQuick(cmd *cobra.Command) {
	set := func(name string, apply func()) { output.UnlessGiven(cmd, name, apply) }
	set("offered", func() { f.Offered = []int{1_000} })
	set("peers", func() { f.Peers = []int{2, 20} })
	set("duration", func() { f.Duration = 2 * time.Second })
	set("warm-up", func() { f.WarmUp = 500 * time.Millisecond })
	set("held", func() { f.Held = 1_000 })
}

func (f tsFlags) validate() error {
	if f.Duration <= 0 || f.WarmUp < 0 || f.Blocks <= 0 || f.Held < 0 {
		return fmt.Errorf("--duration and --block-every must be positive, --warm-up and --held not negative")
	}
	for _, xs := range [][]int{f.Offered, f.Peers} {
		if len(xs) == 0 {
			return fmt.Errorf("--offered and --peers need at least one value")
		}
		for _, x := range xs {
			if x <= 0 {
				return fmt.Errorf("--offered and --peers take positive numbers")
			}
		}
	}
	if slices.Max(f.Peers) > tsMaxPeers {
		return fmt.Errorf("--peers: at most %d", tsMaxPeers)
	}
	return nil
}

func runTSBench(ctx context.Context, f tsFlags, progress io.Writer) (*tsReport, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	r := &tsReport{Settings: f, Machine: machine.Describe(), Transport: "loopback TCP, one connection per peer"}
	if _, ok := cpuwork.ProcessTime(); !ok {
		return nil, fmt.Errorf("this system gives no process CPU time")
	}
	most := 0
	for _, o := range f.Offered {
		most = max(most, txsForRun(o, f.Duration, f.WarmUp))
	}
	// The adder's txs come from the first tsAdderChains chains, the held
	// txs from the others: blocks never take those.
	length := max(most/tsAdderChains, f.Held/tsHeldChains) + 1
	fmt.Fprintf(progress, "building %d signed txs…\n", length*(tsAdderChains+tsHeldChains))
	t0 := time.Now()
	chains, err := txchains.Build(ctx, tsAdderChains+tsHeldChains, length)
	if err != nil {
		return nil, fmt.Errorf("building txs: %w", err)
	}
	fmt.Fprintf(progress, "built in %s\n", time.Since(t0).Round(time.Millisecond))
	load := tsLoad{chains: chains, held: heldTxs(chains, f.Held)}
	for i := range tsAdderChains {
		load.added = append(load.added, chains.Txs[i]...)
	}

	for _, offered := range f.Offered {
		runtime.GC()
		alone, err := runTSCell(ctx, tsLockFree, load, offered, 0, f.Duration, f.WarmUp, f.Blocks)
		if err != nil {
			return nil, fmt.Errorf("%d tx/s, no peers: %w", offered, err)
		}
		fmt.Fprintf(progress, "%5d tx/s, no peers: the adds alone take %s of CPU a tx\n", offered, output.Duration(time.Duration(alone.CPUNs/max(alone.Added, 1))))
		r.Alone = append(r.Alone, alone)
		perAdd := float64(alone.CPUNs) / float64(max(alone.Added, 1))
		for _, peers := range f.Peers {
			for _, variant := range []string{tsLockFree, tsPerItem} {
				runtime.GC()
				c, err := runTSCell(ctx, variant, load, offered, peers, f.Duration, f.WarmUp, f.Blocks)
				if err != nil {
					return nil, fmt.Errorf("%s, %d tx/s, %d peers: %w", variant, offered, peers, err)
				}
				net := float64(c.CPUNs) - perAdd*float64(c.Added)
				c.NetCPUPerServeNs = max(net, 0) / float64(max(c.Served, 1))
				fmt.Fprintf(progress, "%-13s %5d tx/s %3d peers: %.0f tx/s served (%.0f %%), %s CPU a tx served (net %s), add ≤ %s\n",
					variant, offered, peers, c.ServedTxS, 100*c.ServedShare, output.Duration(time.Duration(c.CPUPerServeNs)), output.Duration(time.Duration(c.NetCPUPerServeNs)), output.Duration(time.Duration(c.AddMaxNs)))
				r.Cells = append(r.Cells, c)
			}
		}
	}
	r.judge()
	return r, nil
}
