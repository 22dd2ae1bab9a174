package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/internal/devnet"
)

type throughputFlags struct {
	rates     string
	duration  time.Duration
	nodes     int
	leiosnode string
	plot      string
	keepDirs  bool
	json      string
}

func newThroughputCommand() *cobra.Command {
	var f throughputFlags
	cmd := &cobra.Command{
		Use:   "throughput",
		Short: "Offered tx rate against txs on chain: one devnet per rate, a table and a plot",
		Long: `For each rate of --rates, a fresh devnet of --nodes nodes (each its own
leiosnode process, on loopback, with the devnet template) is fed by the
firehose at that rate for --duration, then checked as 'leiosnode devnet
--report' checks it. The table gives per rate what the firehose offered,
what reached the chain of every node per second (through RBs, through
certified EBs, and in all), the EBs announced and certified, the submit to
on-chain latency (to the slot start of the block that applied the tx) and
the txs lost. The plot (--plot) shows on-chain against offered rate, with
the line on which they are equal, and the p50/p95 latency.

Every node and the firehose share this machine's cores: the curve flattens
where they run out of them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rates, err := parseRates(f.rates)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			report, err := runThroughput(ctx, f, rates, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if f.plot != "" {
				if err := plotThroughput(report, f.plot); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "plot written to", f.plot)
			}
			return printReport(cmd, report, f.json)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.rates, "rates", "250,500,1000,2000", "offered rates, tx/s, comma-separated")
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "how long each devnet runs")
	fs.IntVar(&f.nodes, "nodes", 3, "nodes per devnet")
	fs.StringVar(&f.leiosnode, "leiosnode", "", "the leiosnode binary the nodes run (default: built from this module into a temporary directory)")
	fs.StringVar(&f.plot, "plot", "throughput.png", "where to write the plot (\"\" for none)")
	fs.BoolVar(&f.keepDirs, "keep", false, "keep each devnet's directory (node logs, report)")
	fs.StringVar(&f.json, "json", "", "also write the report, every figure of the table, to this JSON file")
	return cmd
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
	Nodes    int              `json:"nodes"`
	Duration string           `json:"duration"`
	Cells    []throughputCell `json:"cells"`
	Measured string           `json:"measured"`
}

type throughputCell struct {
	Rate         float64 `json:"rate"`          // asked of the firehose
	Offered      float64 `json:"offered"`       // what it sent, tx/s
	OnChain      float64 `json:"onChain"`       // through RBs and EBs, tx/s
	ViaRBs       float64 `json:"viaRBs"`        // tx/s
	ViaEBs       float64 `json:"viaEBs"`        // tx/s
	EBsAnnounced int     `json:"ebsAnnounced"`  // on the common chain
	EBsCertified int     `json:"ebsCertified"`  // by its CertRBs
	LatencyP50Ms int64   `json:"latencyP50Ms"`  // submit to on chain
	LatencyP95Ms int64   `json:"latencyP95Ms"`  //
	LatencyMaxMs int64   `json:"latencyMaxMs"`  //
	Admitted     uint64  `json:"admitted"`      //
	OnEveryChain uint64  `json:"onEveryChain"`  //
	InMempool    uint64  `json:"inMempool"`     // at the end
	Lost         uint64  `json:"lost"`          //
	Dir          string  `json:"dir,omitempty"` // kept with --keep
}

func runThroughput(ctx context.Context, f throughputFlags, rates []float64, log io.Writer) (*throughputReport, error) {
	exe := f.leiosnode
	if exe == "" {
		built, cleanup, err := buildLeiosnode(ctx)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		exe = built
	}
	template, err := devnet.LoadTemplate("")
	if err != nil {
		return nil, err
	}
	r := &throughputReport{Nodes: f.nodes, Duration: f.duration.String(),
		Measured: "per rate, one fresh devnet: txs on the common chain of all nodes per second, from the system start to the last common block; latency from each tx's submission to the slot start of the block that applied it"}
	for _, rate := range rates {
		dir, err := os.MkdirTemp("", fmt.Sprintf("leiosbench-throughput-%g-", rate))
		if err != nil {
			return nil, err
		}
		reportFile := filepath.Join(dir, "report.json")
		fmt.Fprintf(log, "rate %g tx/s: devnet in %s for %s\n", rate, dir, f.duration)
		runErr := devnet.Run(ctx, devnet.Options{
			Spec: devnet.Spec{
				Dir: filepath.Join(dir, "devnet"), Nodes: f.nodes, Funded: 10,
				Template: template, SystemStart: time.Now().Add(3 * time.Second),
			},
			NodeExecutable: exe,
			Duration:       f.duration,
			TxRate:         rate,
			ReportFile:     reportFile,
		}, io.Discard)
		cell, err := readThroughputCell(reportFile, rate)
		if err == nil && runErr != nil {
			err = runErr
		}
		if err != nil {
			return nil, fmt.Errorf("rate %g: %w (devnet kept in %s)", rate, err, dir)
		}
		if f.keepDirs {
			cell.Dir = dir
		} else if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "  offered %.0f tx/s, on chain %.0f tx/s, p95 %.1f s\n", cell.Offered, cell.OnChain, float64(cell.LatencyP95Ms)/1000)
		r.Cells = append(r.Cells, cell)
		if ctx.Err() != nil {
			break
		}
	}
	return r, nil
}

func readThroughputCell(path string, rate float64) (throughputCell, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return throughputCell{}, err
	}
	var rep devnet.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return throughputCell{}, fmt.Errorf("report %s: %w", path, err)
	}
	if rep.Txs == nil || rep.Leios == nil || rep.Leios.Chain == nil {
		return throughputCell{}, errors.New("the report has no txs or no chain section")
	}
	c := rep.Leios.Chain
	cell := throughputCell{
		Rate: rate, Offered: rep.Txs.OfferedPerSecond,
		ViaRBs: c.RBTxPerSecond, ViaEBs: c.EBTxPerSecond, OnChain: c.RBTxPerSecond + c.EBTxPerSecond,
		EBsAnnounced: c.EBsAnnounced, EBsCertified: c.EBsCertified,
		Admitted: rep.Txs.Admitted, OnEveryChain: rep.Txs.OnChain, InMempool: rep.Txs.InMempoolAtEnd, Lost: rep.Txs.Lost,
	}
	if l := rep.Txs.Latency; l != nil {
		cell.LatencyP50Ms, cell.LatencyP95Ms, cell.LatencyMaxMs = l.P50Ms, l.P95Ms, l.MaxMs
	}
	return cell, nil
}

// buildLeiosnode builds this module's leiosnode into a temporary
// directory: the devnets run it as their nodes.
func buildLeiosnode(ctx context.Context) (string, func(), error) {
	dir, err := os.MkdirTemp("", "leiosbench-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	exe := filepath.Join(dir, "leiosnode")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, "github.com/leiosnode/leiosnode/cmd/leiosnode")
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building leiosnode: %w: %s", err, out)
	}
	return exe, cleanup, nil
}

func (r *throughputReport) write(w io.Writer) {
	fmt.Fprintf(w, "== throughput: %d nodes, %s per rate ==\n", r.Nodes, r.Duration)
	fmt.Fprintf(w, "%8s %9s %9s %8s %8s %6s %6s %7s %7s %7s %9s %5s\n",
		"rate", "offered", "on chain", "via RBs", "via EBs", "EBs", "cert", "p50 s", "p95 s", "max s", "mempool", "lost")
	for _, c := range r.Cells {
		fmt.Fprintf(w, "%8.0f %9.1f %9.1f %8.1f %8.1f %6d %6d %7.2f %7.2f %7.2f %9d %5d\n",
			c.Rate, c.Offered, c.OnChain, c.ViaRBs, c.ViaEBs, c.EBsAnnounced, c.EBsCertified,
			float64(c.LatencyP50Ms)/1000, float64(c.LatencyP95Ms)/1000, float64(c.LatencyMaxMs)/1000, c.InMempool, c.Lost)
	}
	fmt.Fprintln(w, "measured:", r.Measured)
}
