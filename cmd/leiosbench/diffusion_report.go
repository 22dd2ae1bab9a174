package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

type diffusionReport struct {
	Flags          diffusionFlags   `json:"flags"`
	BytesPerSecond float64          `json:"bytes_per_second"`
	Cells          []diffusionCell  `json:"cells"`
	Target         *diffusionTarget `json:"target,omitempty"`
}

// diffusionCell is one EB's diffusion on a fresh network. Durations are
// from the forger starting to publish.
type diffusionCell struct {
	Topology     string          `json:"topology"`
	ClosureMB    int             `json:"closure_mb"`
	HeldPct      int             `json:"held_pct"`
	Txs          int             `json:"txs"`
	BodyBytes    uint64          `json:"body_bytes"`
	ClosureBytes uint64          `json:"closure_bytes"`
	Edges        int             `json:"edges"`
	Closure      []time.Duration `json:"closure_ns"`        // per node
	Hops         []time.Duration `json:"hops_ns,omitempty"` // line: node i minus node i-1
	ToLast       time.Duration   `json:"to_last_node_ns"`
	Fetched      []uint64        `json:"fetched_bytes"` // per node
}

// diffusionTarget is the diffusion target: a 12 MB closure crosses one hop in
// ≤ 1.3 × (its transfer time + 2 round trips), from the line's first hop
// with nothing held.
type diffusionTarget struct {
	Hop      time.Duration `json:"hop_ns"`
	Transfer time.Duration `json:"transfer_ns"` // body and closure at the link's bandwidth
	RTT      time.Duration `json:"rtt_ns"`
	Bound    time.Duration `json:"bound_ns"`
	Met      bool          `json:"met"`
}

func (r *diffusionReport) target() *diffusionTarget {
	for _, c := range r.Cells {
		if c.Topology != "line" || c.ClosureMB != 12 || c.HeldPct != 0 || len(c.Hops) == 0 {
			continue
		}
		t := &diffusionTarget{
			Hop:      c.Hops[0],
			Transfer: time.Duration(float64(c.BodyBytes+c.ClosureBytes) / r.BytesPerSecond * float64(time.Second)),
			RTT:      2 * r.Flags.Latency,
		}
		t.Bound = time.Duration(1.3 * float64(t.Transfer+2*t.RTT))
		t.Met = t.Hop <= t.Bound
		return t
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond)) }

func (r *diffusionReport) write(w io.Writer) {
	fmt.Fprintf(w, "EB diffusion: %d nodes, links %v one way, %s (%.2f MB/s, shared by both directions)\n",
		r.Flags.Nodes, r.Flags.Latency, r.Flags.Bandwidth, r.BytesPerSecond/1e6)
	topology := ""
	var tw *tabwriter.Writer
	for _, c := range r.Cells {
		if c.Topology != topology {
			if tw != nil {
				tw.Flush()
			}
			topology = c.Topology
			fmt.Fprintf(w, "\ntopology %s (%d links); times in ms from forging, bytes fetched in kB\n", c.Topology, c.Edges)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			hops := "per node"
			if c.Topology == "line" {
				hops = "per hop"
			}
			fmt.Fprintf(tw, "closure\theld\ttxs\tbody B\tto last\t%s (ms)\tfetched per node (kB)\t\n", hops)
		}
		times := c.Closure
		if c.Topology == "line" {
			times = c.Hops
		}
		fmt.Fprintf(tw, "%d MB\t%d%%\t%d\t%d\t%s\t%s\t%s\t\n",
			c.ClosureMB, c.HeldPct, c.Txs, c.BodyBytes, ms(c.ToLast), joinMs(times), joinKB(c.Fetched))
	}
	if tw != nil {
		tw.Flush()
	}
	if t := r.Target; t != nil {
		verdict := "MET"
		if !t.Met {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "\ntarget: 12 MB closure, one hop %s ms ≤ 1.3 × (transfer %s ms + 2 × RTT %s ms) = %s ms: %s\n",
			ms(t.Hop), ms(t.Transfer), ms(t.RTT), ms(t.Bound), verdict)
	}
}

func joinMs(ds []time.Duration) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return strings.Join(out, " ")
}

func joinKB(bs []uint64) string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = fmt.Sprintf("%.0f", float64(b)/1e3)
	}
	return strings.Join(out, " ")
}
