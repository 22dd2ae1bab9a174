package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/leiosnode/leiosnode/config"
	"github.com/spf13/cobra"
)

// devnetOptions are the devnet command's own flags.
type devnetOptions struct {
	dir        string        // "" = a fresh temporary directory
	duration   time.Duration // 0 = until a signal
	reportFile string        // "" = no report
	startDelay time.Duration // system start = now + this
	txRate     float64       // the firehose's txs per second; 0 = off
}

func newDevnetCommand() *cobra.Command {
	var (
		flags devnetFlags
		opts  devnetOptions
	)
	cmd := &cobra.Command{
		Use:   "devnet",
		Short: "Generate a devnet and run it, one process per node, printing a status line per second",
		Long: `Generate a devnet (as genesis does) and run each node as its own process,
printing each node's command line (to restart one by hand) and, once a second,
the slot, every node's tip, immutable tip, peer count, mempool size and
endorser blocks (EBs announced / bodies held / closures complete), and the
txs sent, on chain and reaching the chain per second.

Unless --tx-rate is 0, a firehose feeds the nodes valid signed txs from the
genesis funds: one chain of txs per funded address (each tx spends the one
before), each chain sent to one node, round-robin at the rate. When it
stops, the devnet gives the last txs a few blocks' time to land, then checks
that every admitted tx is on the chain of every node, or still in a mempool.

--report writes a JSON summary: per node its chain, the chains' agreement,
the firehose's txs and, per EB, the milliseconds from its slot start (when
it was forged) to its complete closure on each node.

Ctrl-C, SIGTERM or --duration stop the nodes (SIGTERM, then SIGKILL after a
timeout).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Once stopping, a second Ctrl-C kills the supervisor outright
			// (the nodes then get SIGTERM from the kernel, see childProcAttr).
			context.AfterFunc(ctx, stop)
			return runDevnet(ctx, cmd, &flags, opts)
		},
	}
	flags.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&opts.dir, "dir", "", "directory for the devnet (default: a fresh temporary directory)")
	fs.DurationVar(&opts.duration, "duration", 0, "stop after this long (0 = run until Ctrl-C)")
	fs.StringVar(&opts.reportFile, "report", "", "write a JSON summary of the run to this file at the end")
	fs.DurationVar(&opts.startDelay, "start-delay", 2*time.Second, "system start = now + this")
	fs.Float64Var(&opts.txRate, "tx-rate", defaultTxRate, "txs per second the firehose submits (0 = no firehose)")
	return cmd
}

// runDevnet generates the devnet, runs its nodes until ctx is cancelled or
// the duration has passed, then stops them and writes the report.
func runDevnet(ctx context.Context, cmd *cobra.Command, flags *devnetFlags, opts devnetOptions) error {
	out := cmd.OutOrStdout()
	if opts.dir == "" {
		dir, err := os.MkdirTemp("", "leiosnode-devnet-")
		if err != nil {
			return err
		}
		opts.dir = dir
	}
	spec, err := flags.spec(cmd, opts.dir, time.Now().Add(opts.startDelay))
	if err != nil {
		return err
	}
	d, err := writeDevnet(spec)
	if err != nil {
		return err
	}
	printDevnet(out, d)
	client := &http.Client{}
	firehose, err := loadFirehose(d, client, firehoseOptions{Rate: opts.txRate})
	if err != nil {
		return err
	}

	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary to start the nodes: %w", err)
	}
	started := time.Now()
	procs, err := startNodeProcesses(exe, d.Nodes, nodeStopTimeout)
	if err != nil {
		return err
	}
	defer procs.stop() // an early return must not leave nodes behind
	for _, p := range procs.procs {
		fmt.Fprintf(out, "%s (pid %d): %s\n", p.name, p.cmd.Process.Pid, p.commandLine())
	}

	watch := newChainWatch(d.Nodes)
	firehoseCtx, stopFirehose := context.WithCancel(ctx)
	defer stopFirehose()
	var firehoseRun sync.WaitGroup
	firehoseRun.Go(func() { firehose.run(firehoseCtx) })
	supervise(ctx, out, d, procs, client, watch, firehose, opts.duration)
	stopFirehose()
	firehoseRun.Wait()
	var txs *TxReport
	if firehose.enabled() {
		// Not cut short by ctx: the check is what the report is for, and
		// it is bounded; a second Ctrl-C still ends the supervisor.
		grace := inFlightGrace(d.Genesis)
		fmt.Fprintf(out, "firehose stopped; giving its last txs up to %v to reach every chain\n", grace.Round(time.Millisecond))
		settled := awaitInFlight(context.Background(), client, d.Nodes, grace)
		txs = firehose.settle(context.Background())
		txs.Settled = settled
		printTxReport(out, txs)
	}

	// The last polls, for the report, are taken before the nodes stop.
	watch.observe(pollStatuses(context.Background(), client, d.Nodes))
	leios := watch.leiosReport(d.Genesis.Clock(), pollEBLists(context.Background(), client, d.Nodes))
	slot := d.Genesis.Clock().SlotAt(time.Now())
	fmt.Fprintln(out, "stopping the nodes")
	procs.stop()
	exited := make([]string, len(procs.procs))
	for i, p := range procs.procs {
		fmt.Fprintf(out, "%s %s\n", p.name, p.exitState())
		if !p.unexpected {
			continue
		}
		exited[i] = p.exitState()
		// A node restarted by hand is not the devnet's child to stop.
		if _, err := fetchStatus(context.Background(), client, d.Nodes[i].HTTPAddr); err == nil {
			fmt.Fprintf(out, "%s was restarted by hand and still runs: stop it yourself\n", p.name)
		}
	}

	report := watch.report(d.Dir, started, time.Now(), slot, exited)
	report.Txs, report.Leios = txs, leios
	printAgreement(out, report.Agreement)
	printLeiosSummary(out, leios)
	if opts.reportFile != "" {
		if err := config.WriteJSON(opts.reportFile, report); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
		fmt.Fprintf(out, "report written to %s\n", opts.reportFile)
	}
	return nil
}

// supervise prints a status line a second, feeding every poll to watch,
// until ctx is cancelled or duration (when non-zero) has passed. A node
// process that exits on its own is announced once and shown as down; the
// devnet keeps running (the user may restart it by hand).
func supervise(ctx context.Context, out io.Writer, d *devnet, procs *nodeProcesses, client *http.Client, watch *chainWatch, firehose *txFirehose, duration time.Duration) {
	var deadline <-chan time.Time
	if duration > 0 {
		timer := time.NewTimer(duration)
		defer timer.Stop()
		deadline = timer.C
	}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	names := make([]string, len(d.Nodes))
	for i, n := range d.Nodes {
		names[i] = n.Name
	}
	rate := newOnChainRate(onChainRateWindow)
	announced := make([]bool, len(procs.procs))
	exitStates := make([]string, len(procs.procs))
	for {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return
		case <-ticker.C:
		}
		polls := pollStatuses(ctx, client, d.Nodes)
		if ctx.Err() != nil {
			return // the polls were cut short, not the nodes
		}
		watch.observe(polls)
		for i, p := range procs.procs {
			exitStates[i] = p.exitState()
			if exitStates[i] != "" && !announced[i] {
				announced[i] = true
				fmt.Fprintf(out, "%s %s; its log is %s\n", p.name, exitStates[i], p.logFile)
			}
		}
		now := time.Now()
		onChain := maxTxsOnChain(polls)
		rate.observe(now, onChain)
		txs := txLine{Submitted: firehose.submitted(), OnChain: onChain, PerSecond: rate.perSecond()}
		fmt.Fprintln(out, statusLine(d.Genesis.Clock(), now, names, polls, exitStates, txs))
	}
}

// printAgreement prints the report's verdict on the nodes' chains.
func printAgreement(out io.Writer, a Agreement) {
	if a.Agree {
		fmt.Fprintf(out, "the nodes agree: common immutable block #%d %s, tips %d blocks apart\n",
			a.CommonImmutable.BlockNumber, hashPrefix(a.CommonImmutable.Hash), a.TipSpread)
		return
	}
	fmt.Fprintln(out, "chain agreement not confirmed:")
	for _, p := range a.Problems {
		fmt.Fprintln(out, "  "+p)
	}
}

// printLeiosSummary prints the report's summary of EB diffusion.
func printLeiosSummary(out io.Writer, r *LeiosReport) {
	s := r.Summary
	fmt.Fprintf(out, "EBs: %d seen, %d complete on all %d nodes read", s.EBsSeen, s.CompleteOnAll, s.NodesRead)
	if s.MedianToLastNodeMs != nil {
		fmt.Fprintf(out, "; slot start to the last node's closure: median %d ms, max %d ms", *s.MedianToLastNodeMs, *s.MaxToLastNodeMs)
	}
	fmt.Fprintln(out)
	for _, n := range r.Nodes {
		if n.Problem != "" {
			fmt.Fprintf(out, "  %s: %s\n", n.Name, n.Problem)
		}
	}
}

// printTxReport prints the firehose's summary.
func printTxReport(out io.Writer, r *TxReport) {
	var rejected uint64
	for _, n := range r.Rejected {
		rejected += n
	}
	fmt.Fprintf(out, "txs: %d submitted, %d admitted, %d rejected; %d on every chain, %d in a mempool, %d on some chains, %d lost",
		r.Submitted, r.Admitted, rejected, r.OnChain, r.InMempoolAtEnd, r.OnSomeChains, r.Lost)
	if r.Unchecked > 0 {
		fmt.Fprintf(out, ", %d unchecked", r.Unchecked)
	}
	fmt.Fprintln(out)
	for _, reason := range slices.Sorted(maps.Keys(r.Rejected)) {
		fmt.Fprintf(out, "  rejected %d× %s\n", r.Rejected[reason], reason)
	}
	for _, line := range append(r.StoppedChains, r.Problems...) {
		fmt.Fprintln(out, "  "+line)
	}
}
