// Package sync is leiosbench sync: a fresh node syncs a forged devnet
// chain from 1 and 3 peers (leiosnode processes on loopback), beside the
// node's own single-core validation of the same blocks; before the syncs,
// identities that ask a source for the whole chain and never read hold
// its heap to a stated bound (the hoarders phase).
//
// Invariants: the chain is forged once, on a virtual clock, and every
// measurement reads copies of it; the node processes start as the
// devnet's do (their own process group, killed with the bench on Linux);
// every figure of the tables is in the JSON report.
// It never leaves a node process or a libp2p host of its own running
// after it returns.
package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/bench/nodebin"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/leios/protocolset"
)

type syncFlags struct {
	Blocks    int               `json:"blocks"`
	TxRate    float64           `json:"tx_rate"`
	Funded    int               `json:"funded"`
	Peers     []int             `json:"peers"`
	Protocols []string          `json:"protocols"`
	sets      []protocolset.Set // Protocols, as validate read them
	Quick     bool              `json:"quick"`
	Hoarders  int               `json:"hoarders"`
	hoardFor  time.Duration
	leiosnode string
	timeout   time.Duration
	profile   bool
	keep      bool
	out       output.Flags
}

// NewCommand is the sync command.
func NewCommand() *cobra.Command {
	f := syncFlags{hoardFor: 30 * time.Second} // --quick shortens the hoard
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "A fresh node syncs a forged devnet chain from 1 and 3 peers, against the node's own single-core validation rate",
		Long: `The sync benchmark.

It writes a devnet of three pools (the devnet template: 100 ms slots,
f = 0.1, k = 10) whose system start is a day ago, and forges its chain
into node-0's databases with the node's own parts — Leios pipeline, chain
database, mempool, a forge.Forger per pool with its votes and certificates
— slot after slot on a virtual clock, the mempool fed --tx-rate txs per
second of chain time from chains of signed txs, until the chain holds
--blocks blocks (and at least one certified EB).

Then it measures, in the same run:
  - validation: the same blocks applied in order to a fresh chain database
    in this process, by one goroutine with GOMAXPROCS 1, through the node's
    ApplyBlock (headers, certificates, every tx with its witnesses); the
    certified closures come from a copy of the LeiosDB;
  - hoarders: once the three nodes serve the chain as relays (below),
    --hoarders fresh identities each open two block-fetch streams to
    node-0, ask for the whole chain and read nothing for 30 s, while
    node-0's heap in use and RSS are read from its /metrics once a second
    before, during and after; the peak heap is held to a bound that grows
    with the streams and the largest block, not the chain (stated in the
    output: the benchmark fails above it). Then one client reads the
    chain again and again on four streams (two identities: block fetch
    serves a peer two) for 10 s, its rate beside the node's serve budget;
  - sync: the three nodes restarted as relays (leiosnode processes) on
    copies of the chain; for each --peers count a fresh leiosnode whose
    topology is that many of them syncs over libp2p on loopback (TCP,
    Noise, Yamux), its /status polled every 50 ms from its first answer
    until its tip is the chain's tip.

Printed: the chain; blocks/s, txs/s and MB/s (blocks, and the certified
EBs' bodies and closures) of the validation and of each sync; each sync's
rate as a share of the validation rate; the target: from 3 peers ≥ 80 %;
the hoarders' figures: node-0's heap and RSS before, at the peak and
after, its bound, the streams served, the reading client's rate.
Plot: sync.png in --plots, the slot of the tip against time (as the
consensus team plots sync progress) and txs on chain against time. With
--cpu-profile, a CPU profile of the sync from the most peers is saved
beside it (go tool pprof -top FILE).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Quick {
				f.Blocks, f.TxRate, f.Funded, f.hoardFor = 8, 800, 4, 10*time.Second
			}
			if err := f.validate(); err != nil {
				return err
			}
			if err := f.out.MakePlotsDir(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			report, err := runSyncBench(ctx, f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := f.out.Emit(cmd, report, map[string]func(string) error{
				"sync.png": func(path string) error { return plotSync(report, path) },
			}); err != nil {
				return err
			}
			if h := report.Hoard; h != nil && !h.Held {
				return fmt.Errorf("hoarders: node-0's heap peaked at %.1f MiB, above its bound of %.1f MiB", h.PeakHeapBytes/(1<<20), h.BoundBytes/(1<<20))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.Blocks, "blocks", 300, "blocks of the forged chain")
	fs.Float64Var(&f.TxRate, "tx-rate", 2000, "txs offered per second of chain time while forging")
	fs.IntVar(&f.Funded, "funded", 40, "funded addresses, each a chain of txs")
	fs.IntSliceVar(&f.Peers, "peers", []int{1, 3}, "peers of the syncing node, one sync each (at most 3)")
	fs.StringSliceVar(&f.Protocols, "protocols", []string{protocolset.CIP.String(), protocolset.Prototype.String()},
		"the syncing node's Leios protocol sets, one sync each per peer count, of "+strings.Join(protocolset.Names(), ", ")+": cip fetches certified closures by multi-block requests, prototype one point at a time")
	fs.StringVar(&f.leiosnode, "leiosnode", "", "the leiosnode binary the nodes run (default: built from this module into a temporary directory)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "give up on a sync after this long")
	fs.BoolVar(&f.profile, "cpu-profile", false, "save a CPU profile of the sync from the most peers into --plots")
	fs.BoolVar(&f.keep, "keep", false, "keep the benchmark's directory (devnet, node logs)")
	fs.IntVar(&f.Hoarders, "hoarders", 32, "identities that ask node-0 for the whole chain on 2 streams each and never read, before the syncs (0: none)")
	fs.BoolVar(&f.Quick, "quick", false, "a smoke run of seconds: 8 blocks at 800 tx/s, hoarders for 10 s")
	f.out.Register(fs)
	return cmd
}

func (f *syncFlags) validate() error {
	if f.Blocks < 2 {
		return errors.New("--blocks must be at least 2")
	}
	if f.TxRate <= 0 {
		return errors.New("--tx-rate must be positive")
	}
	if f.Funded < 1 {
		return errors.New("--funded must be at least 1")
	}
	if len(f.Peers) == 0 {
		return errors.New("--peers: at least one count")
	}
	for _, p := range f.Peers {
		if p < 1 || p > 3 {
			return fmt.Errorf("--peers %d: the chain has 3 sources", p)
		}
	}
	if len(f.Protocols) == 0 {
		return errors.New("--protocols: at least one set")
	}
	f.sets = nil
	for _, p := range f.Protocols {
		set, err := protocolset.Parse(p)
		if err != nil {
			return fmt.Errorf("--protocols: %w", err)
		}
		f.sets = append(f.sets, set)
	}
	if f.Hoarders < 0 {
		return errors.New("--hoarders must not be negative")
	}
	if f.profile && f.out.Plots == "" {
		return errors.New("--cpu-profile needs --plots, the directory it goes to")
	}
	return nil
}

func runSyncBench(ctx context.Context, f syncFlags, progress io.Writer) (_ *syncReport, err error) {
	report := &syncReport{Flags: f, LoadBefore: machine.LoadAverage()}
	exe := f.leiosnode
	if exe == "" {
		fmt.Fprintln(progress, "sync: building leiosnode...")
		built, cleanup, err := nodebin.Build(ctx)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		exe = built
	}
	dir, err := os.MkdirTemp("", "leiosbench-sync-")
	if err != nil {
		return nil, err
	}
	defer func() {
		// A failed run keeps its node logs, which its error names.
		if f.keep || err != nil {
			fmt.Fprintln(progress, "sync: kept", dir)
		} else {
			_ = os.RemoveAll(dir)
		}
	}()

	fmt.Fprintf(progress, "sync: forging %d blocks at %g tx/s...\n", f.Blocks, f.TxRate)
	chain, err := forgeSyncChain(ctx, filepath.Join(dir, "devnet"), chainSpec{
		blocks: f.Blocks, minCertified: 1, txRate: f.TxRate, funded: f.Funded,
	}, progress)
	if err != nil {
		return nil, fmt.Errorf("forging the chain: %w", err)
	}
	report.Chain = chain.stats
	fmt.Fprintf(progress, "sync: %d blocks, %d txs, %d certified EBs forged in %.1f s; validating on one core...\n",
		chain.stats.Blocks, chain.stats.Txs, chain.stats.EBsCertified, chain.stats.ForgeSeconds)
	if report.Validation, err = validateChain(chain, filepath.Join(dir, "validation")); err != nil {
		return nil, err
	}

	client := &http.Client{}
	sources, err := startSources(ctx, exe, chain, client)
	if err != nil {
		return nil, err
	}
	defer sources.stop()
	if f.Hoarders > 0 {
		spec := hoardSpec{identities: f.Hoarders, window: f.hoardFor}
		if report.Hoard, err = runHoard(ctx, spec, chain, sources, client, progress); err != nil {
			return nil, err
		}
	}
	most := slices.Max(f.Peers)
	for _, protocols := range f.sets {
		for _, peers := range f.Peers {
			fmt.Fprintf(progress, "sync: a fresh node from %d peer(s), Leios protocols %s...\n", peers, protocols)
			profile := ""
			if f.profile && peers == most && protocols == f.sets[0] {
				profile = filepath.Join(f.out.Plots, fmt.Sprintf("sync-%dpeers.pprof", peers))
				report.Profile = profile
			}
			profileFor := time.Duration(report.Validation.Seconds * float64(time.Second))
			name := fmt.Sprintf("sync-%s-%d", protocols, peers)
			run, err := syncFrom(ctx, exe, chain, sources, peers, protocols, filepath.Join(dir, name), client, f.timeout, profileFor, profile)
			if err != nil {
				return nil, err
			}
			run.OfValidation = report.Validation.Seconds / run.Seconds
			report.Runs = append(report.Runs, run)
		}
	}
	report.LoadAfter = machine.LoadAverage()
	report.Target = report.target()
	return report, nil
}
