package diffusion

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/leiosnode/leiosnode/lab/bench/output"
)

type diffusionReport struct {
	Flags          diffusionFlags   `json:"flags"`
	BytesPerSecond float64          `json:"bytes_per_second"` // the matrix's links, each way
	Scale          []*scaleReport   `json:"scale,omitempty"`
	Cells          []diffusionCell  `json:"cells"`
	Target         *diffusionTarget `json:"target,omitempty"`
}

// diffusionCell is one EB's diffusion on a fresh network. Times are
// milliseconds from the start of the publication at node 0; each has its
// physical floor (diffusion_floor.go) beside it.
type diffusionCell struct {
	Topology       string    `json:"topology"`
	ClosureMB      int       `json:"closure_mb"`
	HeldPct        int       `json:"held_pct"`
	Txs            int       `json:"txs"`
	BodyBytes      uint64    `json:"body_bytes"`
	ClosureBytes   uint64    `json:"closure_bytes"`
	MissingBytes   uint64    `json:"missing_bytes"` // closure bytes the receivers did not hold
	Edges          int       `json:"edges"`
	Hops           []int     `json:"hops"`       // per node, from the forger
	ClosureMs      []float64 `json:"closure_ms"` // per node; the forger's is when it had stored its own
	FloorMs        []float64 `json:"floor_ms"`   // per node
	ForgerStoredMs float64   `json:"forger_stored_ms"`
	ToLastMs       float64   `json:"to_last_node_ms"`
	ToLastFloorMs  float64   `json:"to_last_node_floor_ms"`
	HopMs          []float64 `json:"hop_ms,omitempty"`       // line: node i less node i-1, the first from publication
	HopFloorMs     []float64 `json:"hop_floor_ms,omitempty"` // line
	Fetched        []uint64  `json:"fetched_bytes"`          // per node
	CPUMs          float64   `json:"cpu_ms"`                 // the process's CPU time (every node's) during the diffusion
}

// receivers are the closure times of every node but the forger.
func (c *diffusionCell) receivers() (times, floors []float64) {
	for i, h := range c.Hops {
		if h > 0 {
			times, floors = append(times, c.ClosureMs[i]), append(floors, c.FloorMs[i])
		}
	}
	return times, floors
}

// diffusionTarget: a 12 MB closure crosses the line's first hop, with
// nothing held, in ≤ 1.3 × (its transfer time + 2 round trips), from the
// start of the publication.
type diffusionTarget struct {
	HopMs      float64 `json:"hop_ms"`
	FloorMs    float64 `json:"floor_ms"`
	TransferMs float64 `json:"transfer_ms"` // body and closure at the link rate
	RTTMs      float64 `json:"rtt_ms"`
	BoundMs    float64 `json:"bound_ms"`
	Met        bool    `json:"met"`
}

func (r *diffusionReport) target() *diffusionTarget {
	for _, c := range r.Cells {
		if c.Topology != "line" || c.ClosureMB != 12 || c.HeldPct != 0 || len(c.HopMs) == 0 {
			continue
		}
		t := &diffusionTarget{
			HopMs:      c.HopMs[0],
			FloorMs:    c.HopFloorMs[0],
			TransferMs: float64(c.BodyBytes+c.ClosureBytes) / r.BytesPerSecond * 1000,
			RTTMs:      2 * millis(r.Flags.Latency),
		}
		t.BoundMs = 1.3 * (t.TransferMs + 2*t.RTTMs)
		t.Met = t.HopMs <= t.BoundMs
		return t
	}
	return nil
}

// scaleReport is the scale run: the nodes' closure times against the
// voting deadline, and memory.
type scaleReport struct {
	Nodes           int                `json:"nodes"`
	Edges           int                `json:"edges"`
	AverageDegree   float64            `json:"average_degree"`
	Bandwidth       string             `json:"bandwidth"`
	BytesPerSecond  float64            `json:"bytes_per_second"`
	TxCacheCapacity int                `json:"tx_cache_capacity"`
	SetupMs         float64            `json:"setup_ms"` // start, warm-up EB and held share, untimed
	Cell            diffusionCell      `json:"cell"`
	Percentiles     map[string]float64 `json:"closure_percentiles_ms"` // over the receivers
	DeadlineMs      float64            `json:"voting_deadline_ms"`     // L_hdr + L_vote
	WithinDeadline  int                `json:"nodes_within_deadline"`  // the forger included
	Met             bool               `json:"met"`
	Memory          *diffusionMemory   `json:"memory"`
}

func newScaleReport(f scaleFlags, s diffusionSetup, run *diffusionRun) *scaleReport {
	c := run.cell
	r := &scaleReport{
		Nodes: s.nodes, Edges: c.Edges, AverageDegree: 2 * float64(c.Edges) / float64(s.nodes),
		Bandwidth: f.Bandwidth, BytesPerSecond: f.bytesPerSec, TxCacheCapacity: s.txCapacity,
		SetupMs: millis(run.setup), Cell: c, DeadlineMs: millis(run.votingDeadline), Memory: run.memory,
		Percentiles: map[string]float64{},
	}
	times, _ := c.receivers()
	slices.Sort(times)
	for _, p := range []int{10, 50, 90, 100} {
		r.Percentiles[fmt.Sprintf("p%d", p)] = times[max(0, (len(times)*p+99)/100-1)]
	}
	for _, t := range c.ClosureMs {
		if t <= r.DeadlineMs {
			r.WithinDeadline++
		}
	}
	r.Met = r.WithinDeadline == s.nodes
	return r
}

func (r *diffusionReport) Write(w io.Writer) {
	for _, s := range r.Scale {
		s.write(w, r.Flags)
	}
	if len(r.Cells) > 0 {
		fmt.Fprintf(w, "\nEB diffusion: %d nodes, links %v one way, %s each way (%.2f MB/s)\n",
			r.Flags.Nodes, r.Flags.Latency, r.Flags.Bandwidth, r.BytesPerSecond/1e6)
	}
	topology := ""
	var tw *tabwriter.Writer
	for _, c := range r.Cells {
		if c.Topology != topology {
			if tw != nil {
				tw.Flush()
			}
			topology = c.Topology
			what := "per node"
			if c.Topology == "line" {
				what = "per hop"
			}
			fmt.Fprintf(w, "\ntopology %s (%d links); ms from the start of publication, [floor]; bytes fetched in kB\n", c.Topology, c.Edges)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "closure\theld\ttxs\tbody kB\tCPU s\tforger stored\tto last [floor]\t%s [floor]\tfetched per node\n", what)
		}
		times, floors := c.ClosureMs, c.FloorMs
		if c.Topology == "line" {
			times, floors = c.HopMs, c.HopFloorMs
		}
		fmt.Fprintf(tw, "%d MB\t%d%%\t%d\t%.0f\t%.1f\t%.0f\t%.0f [%.0f]\t%s\t%s\n",
			c.ClosureMB, c.HeldPct, c.Txs, float64(c.BodyBytes)/1e3, c.CPUMs/1000, c.ForgerStoredMs, c.ToLastMs, c.ToLastFloorMs,
			joinWithFloors(times, floors), joinKB(c.Fetched))
	}
	if tw != nil {
		tw.Flush()
	}
	if t := r.Target; t != nil {
		fmt.Fprintf(w, "\ntarget: 12 MB closure, first hop of the line from publication %.0f ms (floor %.0f) ≤ 1.3 × (transfer %.0f ms + 2 × RTT %.0f ms) = %.0f ms: %s (%.2f × the floor)\n",
			t.HopMs, t.FloorMs, t.TransferMs, t.RTTMs, t.BoundMs, output.MetOrMissed(t.Met), t.HopMs/t.FloorMs)
	}
}

func (s *scaleReport) write(w io.Writer, f diffusionFlags) {
	c := s.Cell
	fmt.Fprintf(w, "scale run: %d nodes, %d links (average degree %.1f), %v one way, %s each way; tx cache %d slots a node\n",
		s.Nodes, s.Edges, s.AverageDegree, f.Latency, s.Bandwidth, s.TxCacheCapacity)
	fmt.Fprintf(w, "  EB: %d txs, %.1f MB closure, %d%% held, %.1f MB to fetch, body %.0f kB; setup (start, warm-up, held share) %.1f s\n",
		c.Txs, float64(c.ClosureBytes)/1e6, c.HeldPct, float64(c.MissingBytes)/1e6, float64(c.BodyBytes)/1e3, s.SetupMs/1000)
	_, floors := c.receivers()
	fmt.Fprintf(w, "  closure, ms from publication, over the %d receivers: p10 %.0f, p50 %.0f, p90 %.0f, max %.0f; floor (by hops) %.0f–%.0f; forger stored its own in %.0f\n",
		len(floors), s.Percentiles["p10"], s.Percentiles["p50"], s.Percentiles["p90"], s.Percentiles["p100"],
		slices.Min(floors), slices.Max(floors), c.ForgerStoredMs)
	fmt.Fprintf(w, "  CPU: the nodes used %.1f s of CPU during the diffusion (%.0f ms a node), %.2f cores on average until the last node held it\n",
		c.CPUMs/1000, c.CPUMs/float64(s.Nodes), c.CPUMs/c.ToLastMs)
	fmt.Fprintf(w, "  target: every node holds the closure within L_hdr + L_vote = %.0f ms: %d of %d: %s\n",
		s.DeadlineMs, s.WithinDeadline, s.Nodes, output.MetOrMissed(s.Met))
	if m := s.Memory; m != nil {
		fmt.Fprintf(w, "  memory: process RSS %.0f MiB idle, %.0f MiB peak; per node: RSS %.1f MiB idle, %.1f MiB peak; Go heap %.1f MiB idle, %.1f MiB holding the EB; outside Go %.1f MiB\n",
			m.IdleRSSMiB, m.PeakRSSMiB, m.IdleRSSPerNode, m.PeakRSSPerNode, m.GoHeapPerNode, m.GoHeapPeakPerNode, m.OutsideGoPerNode)
		fmt.Fprintf(w, "  (%s)\n", m.Measured)
	}
}

func joinWithFloors(times, floors []float64) string {
	out := make([]string, len(times))
	for i := range times {
		out[i] = fmt.Sprintf("%.0f [%.0f]", times[i], floors[i])
	}
	return strings.Join(out, "  ")
}

func joinKB(bs []uint64) string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = fmt.Sprintf("%.0f", float64(b)/1e3)
	}
	return strings.Join(out, " ")
}
