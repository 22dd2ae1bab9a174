package leiosnet

import (
	"errors"
	"log/slog"
	"time"
)

// Topology is the shape of the links between the nodes.
type Topology int

const (
	// Line links node i to node i+1 only: every EB crosses N-1 hops.
	Line Topology = iota
	// RandomGraph is a random spanning tree (each node i > 0 linked to a
	// random earlier node) plus ExtraEdges random links, from Seed.
	RandomGraph
)

func (t Topology) String() string {
	switch t {
	case Line:
		return "line"
	case RandomGraph:
		return "random"
	}
	return "unknown"
}

// Bandwidth50Mbit is 50 Mbit/s in bytes per second.
const Bandwidth50Mbit = 50e6 / 8

// Options configure a Network. Zero values take the documented defaults.
type Options struct {
	// Nodes is the number of nodes. Default 10.
	Nodes int
	// Topology is Line (default) or RandomGraph.
	Topology Topology
	// Seed seeds the random graph and the generated txs. Default 1.
	Seed uint64
	// ExtraEdges are the random graph's links beyond its spanning tree.
	// Default Nodes (an average degree of about four).
	ExtraEdges int

	// Latency is each link's one-way delay. Default 50 ms.
	Latency time.Duration
	// Bandwidth is each link's rate in bytes per second, in each direction
	// (shaper.go). Default Bandwidth50Mbit.
	Bandwidth float64

	// DBCacheBytes sizes each node's LeiosDB block cache (Pebble fills it
	// as it reads, up to this). Default 8 MiB, a harness's share; a node's
	// own default is 128 MiB.
	DBCacheBytes int64
	// TxCapacity sizes each node's tx cache. Default 1<<17 slots (about
	// 5 MiB), room for a few full EBs; the node's default is 160 MiB.
	TxCapacity int
	// Dir holds the nodes' LeiosDBs. Default a temporary directory that
	// Close removes.
	Dir string
	// Logger receives the nodes' logs. Default: discarded.
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.Nodes == 0 {
		o.Nodes = 10
	}
	if o.Nodes < 2 {
		return o, errors.New("leiosnet: a network needs at least two nodes")
	}
	if o.Topology != Line && o.Topology != RandomGraph {
		return o, errors.New("leiosnet: unknown topology")
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.ExtraEdges == 0 {
		o.ExtraEdges = o.Nodes
	}
	if o.Latency == 0 {
		o.Latency = 50 * time.Millisecond
	}
	if o.Bandwidth == 0 {
		o.Bandwidth = Bandwidth50Mbit
	}
	if o.DBCacheBytes == 0 {
		o.DBCacheBytes = 8 << 20
	}
	if o.TxCapacity == 0 {
		o.TxCapacity = 1 << 17
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
