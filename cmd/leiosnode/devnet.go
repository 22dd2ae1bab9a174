package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/devnet"
	"github.com/leiosnode/leiosnode/lab/devnet/chaos"
	"github.com/leiosnode/leiosnode/lab/load"
)

func newDevnetCommand() *cobra.Command {
	var (
		flags      devnetFlags
		links      linkFlags
		dir        string
		startDelay time.Duration
		opts       devnet.Options
		chaosSpec  string
		txSize     string
	)
	cmd := &cobra.Command{
		Use:   "devnet",
		Short: "Generate a devnet and run it, one process per node, printing a status line per second",
		Long: `Generate a devnet (as genesis does) and run each node as its own process,
printing each node's command line (to restart one by hand) and, once a second,
the slot, every node's tip, immutable tip, peer count, mempool size,
endorser blocks (EBs announced / bodies held / closures complete) and
CertRBs applied ("cert"), and the txs sent, on chain and reaching the chain
per second.

Unless --tx-rate is 0, a firehose feeds the nodes valid signed txs from the
genesis funds: one chain of txs per funded address (each tx spends the one
before), each chain sent to one node at its share of the rate. When it
stops, the devnet gives the last txs a few blocks' time to land, then reads
every node's chain and checks that every admitted tx is on the chain of
every node, or still in a mempool, and how long it took from submission to
the chain. --tx-size DIST pads each tx with metadata to a size drawn from
DIST: N bytes, MIN-MAX log-uniform between, or large (200-16384 B, a mean
of 3,673 B); by default every tx is a plain payment of some 191 B.

--report writes a JSON summary: per node its chain, the chains' agreement,
the firehose's txs and, per EB, the milliseconds from its slot start (when
it was forged) to its complete closure on each node, the nodes' votes, and
the CertRB that certified it or why none did; and the txs per second the
common chain carried through RBs and through certified EBs. It also holds
a timeline in 10 s windows (each EB stage's p50/p95 after the slot start,
the voting windows missed, the rates offered, admitted, refused and on
chain, the nodes' CPU by work), the targets over the span after --warmup
(on-chain rate, EBs certified in every 30 s, mempools pinned at their
bound, latency, refusals) and each node's CPU per 1,000 txs on chain
beside the floor measured in the same run; r.png and r.load.png are
drawn beside it, and the summary is printed at the end.

--chaos SPEC injects faults while the devnet runs, one at a time, and
reports each with the nodes' recovery from it, the rollbacks seen and the
txs lost. SPEC is "default" (` + chaos.Default + `) or a
comma-separated list of:
  kill=EVERY[:DOWN]        SIGKILL a random node about every EVERY, restart it
                           with its command line after DOWN (default 2s)
  freeze=EVERY[:FOR]       SIGSTOP a random node, SIGCONT after FOR (5s)
  partition=EVERY[:FOR]    cut a random minority of the nodes off from the
                           rest for FOR (5s); the nodes then dial one another
                           through link proxies of the devnet, which it cuts
  starve=EVERY[:FOR]       run every node a tenth of the time (SIGSTOP 0.9 s,
                           SIGCONT 0.1 s) for FOR (30s); the nodes must then
                           take txs in again by themselves
  refill=EVERY[:DOWN]      SIGKILL a random node, delete its LeiosDB, restart
                           it after DOWN (2s); once half the certified
                           closures it lost are back, stop one of its peers
                           until it has them all and serves every block
  KIND@AT[:LENGTH]         one fault, AT after the system start
  quiet=DURATION           no repeating fault in the run's last DURATION (30s)
  equivocate               the last pool equivocates all along: a second EB
                           for each slot it leads with one; the report shows
                           the others never certify those
Intervals are drawn from EVERY/2 to 3·EVERY/2; --chaos-seed repeats the
choices of a run (its seed is printed).

--topology FILE runs the devnet on an emulated wide-area network, in user
space (no root, no netem): FILE is a topology in the Leios simulators'
format (YAML or JSON: nodes: {NAME: {stake, location, producers: {PEER:
{latency-ms, bandwidth-bytes-per-second}}}}, e.g. configs/topology-10.yaml).
The devnet runs its nodes of most stake (all of them, or --nodes N), each
pool's stake in the file's proportions (scaled to the template's poolStake
per node in all), and only its links: each pair dials through a proxy of the
devnet that delays each chunk by the link's one-way latency after
serialising it at its bandwidth, each way. --link-latency and
--link-bandwidth (100Mbit, 12.5MB, bytes/s) give every link of a full mesh
one shape instead, or replace the file's. At the end (and in the report's
"links") the devnet compares, per node, the bytes its links carried with the
message bytes the node counted and checks that every connection its /status
lists goes through the lab: "every connection through the lab" says no byte
went around the emulation.

--ui ADDR serves a live view of the devnet at http://ADDR/ (host:port; port
0 picks a free one, printed): one page, updated each second from the same
polls, with each node's tip, immutable tip and mempool, the latest EBs'
stages at the nodes as a timeline, their votes against the quorum, and the
txs reaching the chain.

Ctrl-C, SIGTERM or --duration stop the nodes (SIGTERM, then SIGKILL after a
timeout).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Once stopping, a second Ctrl-C kills the supervisor outright
			// (the kernel then sends the nodes SIGTERM, as devnet asks it to).
			context.AfterFunc(ctx, stop)
			if err := checkRunFlags(opts, startDelay); err != nil {
				return err
			}
			sizes, err := txSizeFlag(cmd, txSize)
			if err != nil {
				return err
			}
			opts.TxSize = sizes
			spec, err := flags.spec(cmd, dir, time.Now().Add(startDelay))
			if err != nil {
				return err
			}
			if err := links.apply(cmd, &spec); err != nil {
				return err
			}
			if !cmd.Flags().Changed("funded") {
				spec.Funded = load.FundedFor(opts.TxRate)
			}
			if !cmd.Flags().Changed("warmup") {
				opts.Warmup = devnet.Warmup(spec.Template.Genesis())
			}
			opts.Spec = spec
			if chaosSpec != "" {
				c, err := chaos.ParseSpec(chaosSpec)
				if err != nil {
					return err
				}
				opts.Chaos = &c
				if !cmd.Flags().Changed("chaos-seed") {
					opts.ChaosSeed = rand.Uint64()
				}
			}
			return devnet.Run(ctx, opts, cmd.OutOrStdout())
		},
	}
	flags.register(cmd)
	links.register(cmd)
	// The firehose needs a chain of txs per 100 tx/s it offers.
	funded := cmd.Flags().Lookup("funded")
	funded.Usage = "number of funded addresses, each a chain of the firehose's txs; their payment keys go to DIR/funds/ (default: one per 100 tx/s of --tx-rate, at least 10)"
	funded.DefValue = "0"
	fs := cmd.Flags()
	fs.StringVar(&dir, "dir", "", "directory for the devnet (default: a fresh temporary directory)")
	fs.DurationVar(&opts.Duration, "duration", 0, "stop after this long (0 = run until Ctrl-C)")
	fs.StringVar(&opts.ReportFile, "report", "", "write a JSON summary of the run to this file at the end")
	fs.StringVar(&opts.TraceFile, "trace", "", "write every node's events, merged in time order, to this file in the Leios simulators' trace format (JSON lines)")
	fs.StringVar(&opts.UIAddr, "ui", "", "serve a live view of the devnet at this host:port (e.g. 127.0.0.1:8080)")
	fs.DurationVar(&opts.Warmup, "warmup", devnet.DefaultWarmup, "leave this much of the run, from the system start, out of its targets and CPU figures (default: a minute, or twice the latency model's p95 if longer)")
	fs.DurationVar(&startDelay, "start-delay", 2*time.Second, "system start = now + this")
	fs.Float64Var(&opts.TxRate, "tx-rate", devnet.DefaultTxRate, "txs per second the firehose submits (0 = no firehose)")
	fs.StringVar(&txSize, "tx-size", "", txSizeUsage)
	fs.StringVar(&chaosSpec, "chaos", "", `inject faults: kills, freezes, partitions, an equivocating pool ("default", or a SPEC: see above)`)
	fs.Uint64Var(&opts.ChaosSeed, "chaos-seed", 0, "seed of the chaos mode's random choices (default: a random one, printed)")
	return cmd
}

// checkRunFlags refuses the run flags no devnet can honour, before anything
// is generated: a negative duration would mean "for ever", a negative rate
// "no firehose".
func checkRunFlags(opts devnet.Options, startDelay time.Duration) error {
	switch {
	case opts.Duration < 0:
		return fmt.Errorf("--duration %v: must not be negative (0 runs until Ctrl-C)", opts.Duration)
	case opts.TxRate < 0 || math.IsNaN(opts.TxRate) || math.IsInf(opts.TxRate, 0):
		return fmt.Errorf("--tx-rate %v: must be a finite number ≥ 0 (0 turns the firehose off)", opts.TxRate)
	case opts.Warmup < 0:
		return fmt.Errorf("--warmup %v: must not be negative", opts.Warmup)
	case startDelay < 0:
		return fmt.Errorf("--start-delay %v: must not be negative", startDelay)
	}
	return nil
}
