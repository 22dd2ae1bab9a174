// Package diffusion is leiosbench diffusion: EB diffusion over links of a
// given latency and bandwidth, networks of lab/leiosnet in one
// process, the closure time of every node and of every hop beside the
// physical floor (the bytes at the link rate plus the round trips the
// protocol needs), and the memory each node holds.
//
// Invariants: each run is a fresh network; the floor is computed from the
// same links and bytes as the run; every figure of the tables is in the
// JSON report.
// It never builds a node: the harness builds the pipeline with leios.Open.
package diffusion

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/lab/leiosnet"
)

type diffusionFlags struct {
	Nodes      int           `json:"nodes"`
	Latency    time.Duration `json:"latency_ns"`
	Bandwidth  string        `json:"bandwidth"`
	Topologies []string      `json:"topologies"`
	SizesMB    []int         `json:"closure_mb"`
	HeldPct    []int         `json:"held_pct"`
	Seed       uint64        `json:"seed"`
	Scale      scaleFlags    `json:"scale"`
	Quick      bool          `json:"quick"`
	CPUProfile string        `json:"-"`
	out        output.Flags

	bytesPerSec float64
}

// scaleFlags set the scale runs: many nodes in a random graph, one run
// per node count.
type scaleFlags struct {
	Nodes     []int  `json:"nodes"` // none: no scale run
	Degree    int    `json:"degree"`
	Bandwidth string `json:"bandwidth"`
	SizeMB    int    `json:"closure_mb"`
	HeldPct   int    `json:"held_pct"`

	bytesPerSec float64
}

// NewCommand is the diffusion command.
func NewCommand() *cobra.Command {
	var f diffusionFlags
	cmd := &cobra.Command{
		Use:   "diffusion",
		Short: "EB diffusion over shaped links: closure times per node and per hop against the physical floor, a 100-node run, plots",
		Long: `The EB diffusion benchmark.

Each run is a fresh network (lab/leiosnet) of Leios nodes — LeiosDB,
tx cache, LeiosFetch, LeiosNotify, libp2p host — in one process, on
mocknet links shaped by the harness: every byte a node sends a neighbour
is serialized at the link rate behind the bytes queued before it (an idle
link banks nothing) and arrives one latency later; a link carries its rate
in each direction. Every node first holds the held share of the EB's txs
(through an earlier EB), then node 0 forges the EB (a valid RB header, txs
of 864 random bytes) and publishes it; the run waits until every node holds
the whole closure. Times are from the start of the publication.

First the scale runs, one per count of --scale-nodes: that many nodes in a
random graph of average degree --scale-degree, --scale-bandwidth links,
one --scale-size MB EB of which --scale-held % is held, each node's tx
cache sized for the EBs in play; each prints the nodes' closure times
against the voting deadline (L_hdr + L_vote), the CPU time the nodes spent
and the process's memory per node. All nodes share this machine's cores:
past a few dozen nodes the harness measures its CPU, not the links. Then the
matrix: for each topology × closure size × held share, --nodes nodes on
--bandwidth links; for the line, each hop's time.

Beside every time is its physical floor: the bytes a node must receive at
the link rate plus the latencies of the protocol's trips (an offer one way,
a body request and a txs request each a round trip; at a later hop, the
closure offer and the txs request), along the shortest path from the
forger. The target: a 12 MB closure crosses the line's first hop in
≤ 1.3 × (its transfer time + 2 round trips), from publication.

Plots (PNG, in --plots): diffusion-line.png (closure time per hop of the
line, with the floor), diffusion-random.png (CDF of closure times over the
nodes of the random graph, with the floor), diffusion-scale.png (the same
for the scale runs, with the voting deadline, and closure times by hops).
Every node runs with a node's own LeiosDB block cache (128 MiB at most).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Quick {
				f.quick()
			}
			if err := f.validate(); err != nil {
				return err
			}
			if err := f.out.MakePlotsDir(); err != nil {
				return err
			}
			report, err := runDiffusionBench(cmd.Context(), f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return f.out.Emit(cmd, report, diffusionPlots(report))
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.Nodes, "nodes", 10, "nodes in the matrix's networks")
	fs.DurationVar(&f.Latency, "latency", 50*time.Millisecond, "one-way latency of every link")
	fs.StringVar(&f.Bandwidth, "bandwidth", "50Mbit", "rate of the matrix's links, each way (e.g. 50Mbit, 1Gbit, 800kbit)")
	fs.StringSliceVar(&f.Topologies, "topologies", []string{"line", "random"}, "topologies of the matrix: line, random")
	fs.IntSliceVar(&f.SizesMB, "sizes", []int{1, 4, 12}, "EB closure sizes of the matrix, in MB (10^6 bytes)")
	fs.IntSliceVar(&f.HeldPct, "held", []int{0, 50, 100}, "shares of the EB's txs the receivers already hold, in %")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of the random graphs and the txs")
	fs.IntSliceVar(&f.Scale.Nodes, "scale-nodes", []int{25, 100}, "nodes of each scale run (\"\": none)")
	fs.IntVar(&f.Scale.Degree, "scale-degree", 10, "average degree of the scale run's random graph")
	fs.StringVar(&f.Scale.Bandwidth, "scale-bandwidth", "100Mbit", "rate of the scale run's links, each way")
	fs.IntVar(&f.Scale.SizeMB, "scale-size", 12, "EB closure size of the scale run, in MB")
	fs.IntVar(&f.Scale.HeldPct, "scale-held", 50, "share of the scale run's EB the nodes already hold, in %")
	fs.BoolVar(&f.Quick, "quick", false, "a smoke run of seconds: 4 nodes, 1 MB, 0 and 100 % held; a 12-node scale run of 1 MB")
	fs.StringVar(&f.CPUProfile, "cpu-profile", "", "write a CPU profile of the largest scale run's diffusion (every node's work) to this file")
	f.out.Register(fs)
	return cmd
}

// quick shrinks the runs to a smoke test of seconds.
func (f *diffusionFlags) quick() {
	f.Nodes, f.SizesMB, f.HeldPct = 4, []int{1}, []int{0, 100}
	f.Scale.Nodes, f.Scale.Degree, f.Scale.SizeMB = []int{12}, 4, 1
}

func (f *diffusionFlags) validate() error {
	if f.Nodes < 2 {
		return errors.New("--nodes must be at least 2")
	}
	if f.Latency < 0 {
		return errors.New("--latency must not be negative")
	}
	var err error
	if f.bytesPerSec, err = parseBandwidth("--bandwidth", f.Bandwidth); err != nil {
		return err
	}
	for _, t := range f.Topologies {
		if _, err := parseTopology(t); err != nil {
			return err
		}
	}
	for _, mb := range append(f.SizesMB, f.Scale.SizeMB) {
		if mb <= 0 || mb > 12 {
			return fmt.Errorf("closure size %d MB is outside (0, 12], the EB closure limit", mb)
		}
	}
	for _, p := range append(f.HeldPct, f.Scale.HeldPct) {
		if p < 0 || p > 100 {
			return fmt.Errorf("held share %d%% is outside [0, 100]", p)
		}
	}
	s := &f.Scale
	for _, n := range s.Nodes {
		if s.Degree < 2 || s.Degree >= n {
			return fmt.Errorf("--scale-nodes %d, --scale-degree %d: want a degree of at least 2 and under the nodes", n, s.Degree)
		}
	}
	if len(s.Nodes) > 0 {
		if s.bytesPerSec, err = parseBandwidth("--scale-bandwidth", s.Bandwidth); err != nil {
			return err
		}
	}
	return nil
}

// parseBandwidth reads a rate like "50Mbit" (bits per second, decimal
// prefixes) into bytes per second.
func parseBandwidth(flag, s string) (float64, error) {
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
		return 0, fmt.Errorf("%s %q: want a positive rate like 50Mbit", flag, s)
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

// nodeDBCache is the LeiosDB block cache of a node run with its defaults
// (leiosdb.Options): the benchmark's nodes get it too, so their reads are
// a node's. Pebble allocates the cache as it fills.
const nodeDBCache = 128 << 20

// diffusionSetup is one run: a fresh network and one EB.
type diffusionSetup struct {
	nodes       int
	topology    leiosnet.Topology
	extraEdges  int // 0: leiosnet's default
	latency     time.Duration
	bytesPerSec float64
	closureMB   int
	heldPct     int
	seed        uint64
	txCapacity  int    // 0: leiosnet's default
	dbCache     int64  // 0: leiosnet's default
	memory      bool   // measure the process's memory
	cpuProfile  string // a file for a CPU profile of the diffusion, or ""
}

// runDiffusionBench runs the scale runs, then every cell of the matrix,
// each on a fresh network, logging progress.
func runDiffusionBench(ctx context.Context, f diffusionFlags, progress io.Writer) (*diffusionReport, error) {
	report := &diffusionReport{Flags: f, BytesPerSecond: f.bytesPerSec}
	s := f.Scale
	for _, nodes := range s.Nodes {
		// The one graph: a spanning tree plus random links up to the degree.
		extra := max(1, nodes*s.Degree/2-(nodes-1))
		txs := s.SizeMB * 1_000_000 / leiosnet.TxSize
		setup := diffusionSetup{
			nodes: nodes, topology: leiosnet.RandomGraph, extraEdges: extra,
			latency: f.Latency, bytesPerSec: s.bytesPerSec,
			closureMB: s.SizeMB, heldPct: s.HeldPct, seed: f.Seed,
			// The EBs in play (the warm-up's one tx, the held share's EB
			// and the EB) at a load of one half.
			txCapacity: 2 * (1 + txs*s.HeldPct/100 + txs),
			dbCache:    nodeDBCache,
			memory:     true,
		}
		if nodes == slices.Max(s.Nodes) {
			setup.cpuProfile = f.CPUProfile
		}
		fmt.Fprintf(progress, "diffusion: scale run, %d nodes, degree %d, %d MB, %d%% held...\n", nodes, s.Degree, s.SizeMB, s.HeldPct)
		run, err := runDiffusionSetup(ctx, setup)
		if err != nil {
			return nil, fmt.Errorf("scale run of %d nodes: %w", nodes, err)
		}
		report.Scale = append(report.Scale, newScaleReport(s, setup, run))
	}
	for _, name := range f.Topologies {
		topology, _ := parseTopology(name)
		for _, mb := range f.SizesMB {
			for _, held := range f.HeldPct {
				fmt.Fprintf(progress, "diffusion: %s, %d MB, %d%% held...\n", name, mb, held)
				run, err := runDiffusionSetup(ctx, diffusionSetup{
					nodes: f.Nodes, topology: topology, latency: f.Latency, bytesPerSec: f.bytesPerSec,
					closureMB: mb, heldPct: held, seed: f.Seed, dbCache: nodeDBCache,
				})
				if err != nil {
					return nil, fmt.Errorf("%s, %d MB, %d%% held: %w", name, mb, held, err)
				}
				report.Cells = append(report.Cells, run.cell)
			}
		}
	}
	report.Target = report.target()
	return report, nil
}

// diffusionRun is what one setup measured.
type diffusionRun struct {
	cell           diffusionCell
	votingDeadline time.Duration
	setup          time.Duration // starting the network and handing out the held share
	cpu            time.Duration // the process's CPU time during the diffusion
	memory         *diffusionMemory
}

func runDiffusionSetup(ctx context.Context, s diffusionSetup) (*diffusionRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	var before, idle processMemory
	if s.memory {
		before = readMemory()
		_ = resetPeakRSS() // where it fails, the peak is the process's
	}
	started := time.Now()
	n, err := leiosnet.Start(ctx, leiosnet.Options{
		Nodes: s.nodes, Topology: s.topology, ExtraEdges: s.extraEdges, Seed: s.seed,
		Latency: s.latency, Bandwidth: s.bytesPerSec, TxCapacity: s.txCapacity, DBCacheBytes: s.dbCache,
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = n.Close() }()
	rng := rand.New(rand.NewPCG(s.seed, uint64(s.closureMB)<<8|uint64(s.heldPct)))
	txs := leiosnet.GenerateTxs(rng, s.closureMB*1_000_000)
	var heldBytes uint64
	if share := len(txs) * s.heldPct / 100; share > 0 {
		seed, err := n.Preseed(ctx, txs[:share])
		if err != nil {
			return nil, err
		}
		heldBytes = seed.ClosureSize()
	}
	eb, err := n.Forge(txs)
	if err != nil {
		return nil, err
	}
	run := &diffusionRun{votingDeadline: n.VotingDeadline(), setup: time.Since(started)}
	if s.memory {
		idle = readMemory()
	}
	stopProfile, err := startCPUProfile(s.cpuProfile)
	if err != nil {
		return nil, err
	}
	cpuBefore, _ := cpuwork.ProcessTime()
	d, err := n.Diffuse(ctx, 0, eb)
	stopProfile()
	if err != nil {
		return nil, err
	}
	if cpuAfter, ok := cpuwork.ProcessTime(); ok {
		run.cpu = cpuAfter - cpuBefore
	}
	if s.memory {
		run.memory = newDiffusionMemory(s.nodes, before, idle, readMemory())
	}
	floor := diffusionFloor{latency: s.latency, rate: s.bytesPerSec, body: eb.Body.Size(), missing: eb.ClosureSize() - heldBytes}
	run.cell = newDiffusionCell(s, n, eb, d, floor)
	run.cell.CPUMs = millis(run.cpu)
	return run, nil
}

func newDiffusionCell(s diffusionSetup, n *leiosnet.Network, eb *leiosnet.EB, d *leiosnet.Diffusion, floor diffusionFloor) diffusionCell {
	c := diffusionCell{
		Topology:     s.topology.String(),
		ClosureMB:    s.closureMB,
		HeldPct:      s.heldPct,
		Txs:          len(eb.Closure),
		BodyBytes:    eb.Body.Size(),
		ClosureBytes: eb.ClosureSize(),
		MissingBytes: floor.missing,
		Edges:        len(n.Edges()),
		Hops:         n.Distances(0),
		Fetched:      d.Fetched,
	}
	for i, t := range d.Closure {
		c.ClosureMs = append(c.ClosureMs, millis(t))
		c.FloorMs = append(c.FloorMs, millis(floor.at(c.Hops[i])))
	}
	c.ForgerStoredMs = c.ClosureMs[0]
	for i := range c.Hops {
		if c.Hops[i] > 0 && c.ClosureMs[i] >= c.ToLastMs {
			c.ToLastMs, c.ToLastFloorMs = c.ClosureMs[i], c.FloorMs[i]
		}
	}
	if s.topology == leiosnet.Line {
		// Hop i is node i's time less node i-1's, the first from the
		// start of the publication.
		for i := 1; i < len(c.ClosureMs); i++ {
			prev, prevFloor := c.ClosureMs[i-1], c.FloorMs[i-1]
			if i == 1 {
				prev, prevFloor = 0, 0
			}
			c.HopMs = append(c.HopMs, c.ClosureMs[i]-prev)
			c.HopFloorMs = append(c.HopFloorMs, c.FloorMs[i]-prevFloor)
		}
	}
	return c
}

// startCPUProfile profiles this process into file until the returned stop
// is called; an empty file profiles nothing.
func startCPUProfile(file string) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
