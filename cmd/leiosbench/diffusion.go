package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/internal/leiosnet"
)

type diffusionFlags struct {
	Nodes      int           `json:"nodes"`
	Latency    time.Duration `json:"latency_ns"`
	Bandwidth  string        `json:"bandwidth"`
	Topologies []string      `json:"topologies"`
	SizesMB    []int         `json:"closure_mb"`
	HeldPct    []int         `json:"held_pct"`
	Seed       uint64        `json:"seed"`
	JSON       bool          `json:"-"`

	bytesPerSec float64
}

func newDiffusionCommand() *cobra.Command {
	var f diffusionFlags
	cmd := &cobra.Command{
		Use:   "diffusion",
		Short: "EB diffusion over mocknet links: per-hop and to-last-node latency, bytes fetched per node",
		Long: `The EB diffusion benchmark.

For each topology × closure size × held share, a fresh network of --nodes
Leios nodes (internal/leiosnet: LeiosDB, tx cache, LeiosFetch, LeiosNotify
on a libp2p mocknet, every link --latency one way and --bandwidth, shared by
its two directions) first gives every node the held share of the EB's txs
through an earlier EB, then node 0 forges the EB (a valid RB header, txs of
864 random bytes) and publishes it; the run waits until every node holds
the whole closure.

Printed: the time until each node held the closure; for the line, each
hop (node i's time minus node i-1's); the time to the last node; the bytes
each node fetched (bodies and txs received, as the fetch logic counts them —
mocknet keeps no byte counters, so bytes sent are the neighbours' fetches);
and the target: a 12 MB closure crosses one hop in ≤ 1.3 × (its transfer
time + 2 round trips), from the line's first hop.

Caveat: mocknet's link rate limiter is a token bucket that banks up to one
second of idle bandwidth. Every link is reset just before the EB is
published, so the first hop runs at the nominal rate; a later hop's link
has banked its idle time during the earlier hops, so later hops (and the
to-last-node time) are optimistic by up to min(idle, 1 s) of bandwidth.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			report, err := runDiffusionBench(cmd.Context(), f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), report, f.JSON)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.Nodes, "nodes", 10, "nodes in the network")
	fs.DurationVar(&f.Latency, "latency", 50*time.Millisecond, "one-way latency of every link")
	fs.StringVar(&f.Bandwidth, "bandwidth", "50Mbit", "bandwidth of every link (e.g. 50Mbit, 1Gbit, 800kbit)")
	fs.StringSliceVar(&f.Topologies, "topologies", []string{"line", "random"}, "topologies: line, random")
	fs.IntSliceVar(&f.SizesMB, "sizes", []int{1, 4, 12}, "EB closure sizes, in MB (10^6 bytes)")
	fs.IntSliceVar(&f.HeldPct, "held", []int{0, 50, 100}, "shares of the EB's txs the receivers already hold, in %")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of the random graph and the txs")
	fs.BoolVar(&f.JSON, "json", false, "print one JSON document instead of the tables")
	return cmd
}

func (f *diffusionFlags) validate() error {
	if f.Nodes < 2 {
		return errors.New("--nodes must be at least 2")
	}
	if f.Latency < 0 {
		return errors.New("--latency must not be negative")
	}
	bps, err := parseBandwidth(f.Bandwidth)
	if err != nil {
		return err
	}
	f.bytesPerSec = bps
	for _, t := range f.Topologies {
		if _, err := parseTopology(t); err != nil {
			return err
		}
	}
	for _, mb := range f.SizesMB {
		if mb <= 0 || mb > 12 {
			return fmt.Errorf("--sizes: %d MB is outside (0, 12], the EB closure limit", mb)
		}
	}
	for _, p := range f.HeldPct {
		if p < 0 || p > 100 {
			return fmt.Errorf("--held: %d%% is outside [0, 100]", p)
		}
	}
	return nil
}

// parseBandwidth reads a rate like "50Mbit" (bits per second, decimal
// prefixes) into bytes per second.
func parseBandwidth(s string) (float64, error) {
	lower := strings.ToLower(strings.TrimSpace(s))
	lower = strings.TrimSuffix(strings.TrimSuffix(lower, "/s"), "ps")
	scale := 1.0
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			lower, scale = strings.TrimSuffix(lower, u.suffix), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(lower, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("--bandwidth %q: want a positive rate like 50Mbit", s)
	}
	return v * scale / 8, nil
}

func parseTopology(s string) (leiosnet.Topology, error) {
	switch s {
	case "line":
		return leiosnet.Line, nil
	case "random":
		return leiosnet.RandomGraph, nil
	}
	return 0, fmt.Errorf("unknown topology %q (line, random)", s)
}

// runDiffusionBench runs every cell on a fresh network, logging progress.
func runDiffusionBench(ctx context.Context, f diffusionFlags, progress io.Writer) (*diffusionReport, error) {
	report := &diffusionReport{Flags: f, BytesPerSecond: f.bytesPerSec}
	for _, name := range f.Topologies {
		topology, _ := parseTopology(name)
		for _, mb := range f.SizesMB {
			for _, held := range f.HeldPct {
				fmt.Fprintf(progress, "diffusion: %s, %d MB, %d%% held...\n", name, mb, held)
				cell, err := runDiffusionCell(ctx, f, topology, mb, held)
				if err != nil {
					return nil, fmt.Errorf("%s, %d MB, %d%% held: %w", name, mb, held, err)
				}
				report.Cells = append(report.Cells, cell)
			}
		}
	}
	report.Target = report.target()
	return report, nil
}

func runDiffusionCell(ctx context.Context, f diffusionFlags, topology leiosnet.Topology, mb, held int) (diffusionCell, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	n, err := leiosnet.Start(ctx, leiosnet.Options{
		Nodes: f.Nodes, Topology: topology, Seed: f.Seed,
		Latency: f.Latency, Bandwidth: f.bytesPerSec,
	})
	if err != nil {
		return diffusionCell{}, err
	}
	defer func() { _ = n.Close() }()
	rng := rand.New(rand.NewPCG(f.Seed, uint64(mb)<<8|uint64(held)))
	txs := leiosnet.GenerateTxs(rng, mb*1_000_000)
	if share := len(txs) * held / 100; share > 0 {
		if _, err := n.Preseed(ctx, txs[:share]); err != nil {
			return diffusionCell{}, err
		}
	}
	eb, err := n.Forge(txs)
	if err != nil {
		return diffusionCell{}, err
	}
	d, err := n.Diffuse(ctx, 0, eb)
	if err != nil {
		return diffusionCell{}, err
	}
	cell := diffusionCell{
		Topology:     topology.String(),
		ClosureMB:    mb,
		HeldPct:      held,
		Txs:          len(txs),
		BodyBytes:    eb.Body.Size(),
		ClosureBytes: eb.ClosureSize(),
		Edges:        len(n.Edges()),
		ToLast:       d.Last(),
		Fetched:      d.Fetched,
	}
	for _, c := range d.Closure {
		cell.Closure = append(cell.Closure, c)
	}
	if topology == leiosnet.Line {
		for i := 1; i < len(d.Closure); i++ {
			cell.Hops = append(cell.Hops, d.Closure[i]-d.Closure[i-1])
		}
	}
	return cell, nil
}
