package layout

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Topology is a network in the Leios simulators' topology format
// (ouroboros-leios data/simulation/topology.d.ts): nodes by name, each
// with its stake and its producers — the nodes it receives from, each
// over a link of a one-way latency and a bandwidth.
type Topology struct {
	// File is the file it was read from, for messages.
	File string
	// Nodes are sorted by stake, the largest first, ties by name: the
	// order in which Top keeps them and the devnet numbers its nodes.
	Nodes []TopologyNode
}

// TopologyNode is one node of a Topology.
type TopologyNode struct {
	Name  string
	Stake uint64 // 0 when the file gives none
	// Producers are the nodes it receives from, by name, and the shape of
	// each link (of the bytes from the producer to this node).
	Producers map[string]LinkShape
}

// LinkShape is what an emulated link does to the bytes it carries one
// way: it delivers them Latency after they finished serialising at
// BytesPerSecond. Zero values are no delay and no limit.
type LinkShape struct {
	Latency        time.Duration
	BytesPerSecond int64
}

// IsZero says the shape leaves the bytes as they are.
func (s LinkShape) IsZero() bool { return s == LinkShape{} }

func (s LinkShape) String() string {
	return fmt.Sprintf("%v %s", s.Latency.Round(100*time.Microsecond), rateString(s.BytesPerSecond))
}

// The file's types. Fields the format has but a devnet has no use for
// (location, CPU cores, the Rust simulator's tx generation, adversarial
// behaviours) are read and ignored; any other field is an error, so a
// misspelt one is not silently dropped.
type (
	topologyFile struct {
		Nodes map[string]topologyFileNode `yaml:"nodes"`
	}
	topologyFileNode struct {
		Stake              *uint64                     `yaml:"stake"`
		Location           any                         `yaml:"location"`
		Producers          map[string]topologyFileLink `yaml:"producers"`
		CPUCoreCount       any                         `yaml:"cpu-core-count"`
		TxConflictFraction any                         `yaml:"tx-conflict-fraction"`
		TxGenerationWeight any                         `yaml:"tx-generation-weight"`
		Adversarial        any                         `yaml:"adversarial"`
		Behaviours         any                         `yaml:"behaviours"`
	}
	topologyFileLink struct {
		LatencyMs      *float64 `yaml:"latency-ms"`
		BytesPerSecond *int64   `yaml:"bandwidth-bytes-per-second"`
	}
)

// ReadTopology reads a topology file, YAML or JSON. Every error is one
// line naming the file.
func ReadTopology(path string) (*Topology, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	t, err := parseTopology(b)
	if err != nil {
		return nil, fmt.Errorf("topology %s: %w", path, err)
	}
	t.File = path
	return t, nil
}

func parseTopology(b []byte) (*Topology, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f topologyFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, oneLine(err)
	}
	if len(f.Nodes) == 0 {
		return nil, errors.New("no nodes (want nodes: {NAME: {stake, location, producers}})")
	}
	t := &Topology{}
	for name, n := range f.Nodes {
		node := TopologyNode{Name: name, Producers: map[string]LinkShape{}}
		if n.Stake != nil {
			node.Stake = *n.Stake
		}
		for from, l := range n.Producers {
			if _, ok := f.Nodes[from]; !ok {
				return nil, fmt.Errorf("node %s: producer %s is no node of the topology", name, from)
			}
			if from == name {
				return nil, fmt.Errorf("node %s lists itself as a producer", name)
			}
			shape, err := l.shape()
			if err != nil {
				return nil, fmt.Errorf("node %s, producer %s: %w", name, from, err)
			}
			node.Producers[from] = shape
		}
		t.Nodes = append(t.Nodes, node)
	}
	slices.SortFunc(t.Nodes, func(a, b TopologyNode) int {
		return cmp.Or(cmp.Compare(b.Stake, a.Stake), cmp.Compare(a.Name, b.Name))
	})
	return t, nil
}

func (l topologyFileLink) shape() (LinkShape, error) {
	switch {
	case l.LatencyMs == nil:
		return LinkShape{}, errors.New("no latency-ms")
	case *l.LatencyMs < 0 || math.IsNaN(*l.LatencyMs) || *l.LatencyMs > 60_000:
		return LinkShape{}, fmt.Errorf("latency-ms %v: want 0 to 60000", *l.LatencyMs)
	case l.BytesPerSecond != nil && *l.BytesPerSecond <= 0:
		return LinkShape{}, fmt.Errorf("bandwidth-bytes-per-second %d: want a positive number, or none for no limit", *l.BytesPerSecond)
	}
	s := LinkShape{Latency: time.Duration(*l.LatencyMs * float64(time.Millisecond)).Round(time.Microsecond)}
	if l.BytesPerSecond != nil {
		s.BytesPerSecond = *l.BytesPerSecond
	}
	return s, nil
}

// oneLine is a YAML error on one line: the decoder lists unknown fields
// one per line.
func oneLine(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return errors.New(strings.Join(te.Errors, "; "))
	}
	return errors.New(strings.Join(strings.Fields(err.Error()), " "))
}

// Top is the topology of its n nodes of most stake (ties by name) and the
// links among them. A node left with no path to the others is an error
// naming it: its devnet node could never sync.
func (t *Topology) Top(n int) (*Topology, error) {
	if n < 1 || n > len(t.Nodes) {
		return nil, fmt.Errorf("topology %s has %d nodes: cannot keep %d", t.File, len(t.Nodes), n)
	}
	kept := &Topology{File: t.File, Nodes: make([]TopologyNode, n)}
	keep := map[string]bool{}
	for _, node := range t.Nodes[:n] {
		keep[node.Name] = true
	}
	for i, node := range t.Nodes[:n] {
		kept.Nodes[i] = TopologyNode{Name: node.Name, Stake: node.Stake, Producers: map[string]LinkShape{}}
		for from, s := range node.Producers {
			if keep[from] {
				kept.Nodes[i].Producers[from] = s
			}
		}
	}
	if cut := kept.unreachable(); len(cut) > 0 {
		if len(cut) > 5 {
			cut = append(cut[:5], "…")
		}
		return nil, fmt.Errorf("topology %s: of its %d nodes of most stake, %s %s no link to %s (whose links the devnet keeps): give another --nodes, or link them in the file",
			t.File, n, strings.Join(cut, ", "), map[bool]string{true: "has", false: "have"}[len(cut) == 1], t.Nodes[0].Name)
	}
	return kept, nil
}

// unreachable are the nodes with no path to the first, links taken both
// ways.
func (t *Topology) unreachable() []string {
	index := map[string]int{}
	for i, n := range t.Nodes {
		index[n.Name] = i
	}
	adjacent := make([][]int, len(t.Nodes))
	for i, n := range t.Nodes {
		for from := range n.Producers {
			j := index[from]
			adjacent[i], adjacent[j] = append(adjacent[i], j), append(adjacent[j], i)
		}
	}
	seen := make([]bool, len(t.Nodes))
	seen[0] = true
	for queue := []int{0}; len(queue) > 0; queue = queue[1:] {
		for _, j := range adjacent[queue[0]] {
			if !seen[j] {
				seen[j] = true
				queue = append(queue, j)
			}
		}
	}
	var cut []string
	for i, ok := range seen {
		if !ok {
			cut = append(cut, t.Nodes[i].Name)
		}
	}
	return cut
}

// Stakes are the pools' stakes of the topology's nodes, in its order:
// the file's proportions scaled to a total of perPool × the nodes, so that
// a template's amounts (and its committee and quorum sizing) hold; each
// rounded down. With no stake in the file every pool gets perPool.
func (t *Topology) Stakes(perPool uint64) []uint64 {
	stakes := make([]uint64, len(t.Nodes))
	sum := new(big.Int)
	for _, n := range t.Nodes {
		sum.Add(sum, new(big.Int).SetUint64(n.Stake))
	}
	total := new(big.Int).Mul(new(big.Int).SetUint64(perPool), big.NewInt(int64(len(t.Nodes))))
	for i, n := range t.Nodes {
		if sum.Sign() == 0 {
			stakes[i] = perPool
			continue
		}
		s := new(big.Int).Mul(total, new(big.Int).SetUint64(n.Stake))
		stakes[i] = s.Quo(s, sum).Uint64()
	}
	return stakes
}

// pairs are the topology's links as unordered pairs of node indexes (the
// smaller first), in order, each with the shape of its bytes each way:
// forward from the first to the second, back the other way. The file
// gives a link's shape for the bytes a node receives from its producer;
// a pair only one side lists gets that shape both ways.
func (t *Topology) pairs() []topologyPair {
	index := map[string]int{}
	for i, n := range t.Nodes {
		index[n.Name] = i
	}
	shapes := map[[2]int]LinkShape{} // [from, to] → shape of the bytes from → to
	for to, n := range t.Nodes {
		for name, s := range n.Producers {
			shapes[[2]int{index[name], to}] = s
		}
	}
	var pairs []topologyPair
	for a := range t.Nodes {
		for b := a + 1; b < len(t.Nodes); b++ {
			forward, okF := shapes[[2]int{a, b}]
			back, okB := shapes[[2]int{b, a}]
			switch {
			case !okF && !okB:
				continue
			case !okF:
				forward = back
			case !okB:
				back = forward
			}
			pairs = append(pairs, topologyPair{a: a, b: b, forward: forward, back: back})
		}
	}
	return pairs
}

type topologyPair struct {
	a, b          int
	forward, back LinkShape
}

// Hops are the fewest links between the devnet's pools, by breadth-first
// search over its links in either direction: Hops()[i][j] from node i to
// node j, -1 without a path. nil when the links are not laid out.
func (d *Layout) Hops() [][]int {
	if len(d.Links) == 0 {
		return nil
	}
	peers := make([][]int, len(d.Nodes))
	for _, l := range d.Links {
		peers[l.From] = append(peers[l.From], l.To)
		peers[l.To] = append(peers[l.To], l.From)
	}
	hops := make([][]int, len(d.Nodes))
	for from := range hops {
		dist := make([]int, len(d.Nodes))
		for i := range dist {
			dist[i] = -1
		}
		dist[from] = 0
		queue := []int{from}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, p := range peers[n] {
				if dist[p] < 0 {
					dist[p] = dist[n] + 1
					queue = append(queue, p)
				}
			}
		}
		hops[from] = dist
	}
	return hops
}
