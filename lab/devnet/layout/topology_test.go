package layout

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/config"
)

// fourNodes is a topology in the simulators' format: d links to a and c;
// b only to a; c lists d with another shape than d lists c.
const fourNodes = `
nodes:
  a:
    stake: 300
    location: [0.1, 0.2]
    cpu-core-count: 2
    producers:
      b: {latency-ms: 12.5, bandwidth-bytes-per-second: 1000000}
      d: {latency-ms: 69}
  b:
    stake: 100
    location: {cluster: eu}
    producers:
      a: {latency-ms: 12.5, bandwidth-bytes-per-second: 1000000}
  c:
    stake: 200
    location: [0.3, 0.4]
    producers:
      d: {latency-ms: 268, bandwidth-bytes-per-second: 500}
  d:
    stake: 200
    location: [0.5, 0.6]
    producers:
      c: {latency-ms: 100, bandwidth-bytes-per-second: 700}
`

func writeTopology(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadTopology: the nodes come sorted by stake (ties by name), links
// as the file gives them; keeping the top three drops b and its link.
func TestReadTopology(t *testing.T) {
	topo, err := ReadTopology(writeTopology(t, fourNodes))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range topo.Nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"a", "c", "d", "b"}) {
		t.Errorf("nodes %v, want by stake then name", names)
	}
	if s := topo.Nodes[0].Producers["b"]; s != (LinkShape{Latency: 12500 * time.Microsecond, BytesPerSecond: 1e6}) {
		t.Errorf("a's link from b: %+v", s)
	}
	top, err := topo.Top(3)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := top.Nodes[0].Producers["b"]; ok || len(top.Nodes) != 3 {
		t.Errorf("the top 3 keep %d nodes, a's producers %v", len(top.Nodes), top.Nodes[0].Producers)
	}
	// Pairs: a–c none; a–d from a's listing of d, both ways alike; c–d
	// each way as the receiving side lists it.
	pairs := top.pairs()
	want := []topologyPair{
		{a: 0, b: 2, forward: LinkShape{Latency: 69 * time.Millisecond}, back: LinkShape{Latency: 69 * time.Millisecond}},
		{a: 1, b: 2, forward: LinkShape{Latency: 100 * time.Millisecond, BytesPerSecond: 700}, back: LinkShape{Latency: 268 * time.Millisecond, BytesPerSecond: 500}},
	}
	if !slices.Equal(pairs, want) {
		t.Errorf("pairs %+v, want %+v", pairs, want)
	}
	if stakes := top.Stakes(1000); !slices.Equal(stakes, []uint64{1285, 857, 857}) {
		t.Errorf("stakes %v, want 300:200:200 of 3000", stakes)
	}
}

func TestReadTopologyRejects(t *testing.T) {
	for name, tt := range map[string]struct{ text, want string }{
		"unknown field":    {"nodes:\n  a:\n    stake: 1\n    producers:\n      b: {latency_ms: 3}\n  b: {producers: {}}\n", "field latency_ms not found"},
		"unknown producer": {"nodes:\n  a:\n    producers:\n      z: {latency-ms: 3}\n", "producer z is no node"},
		"no latency":       {"nodes:\n  a: {producers: {b: {bandwidth-bytes-per-second: 3}}}\n  b: {producers: {}}\n", "no latency-ms"},
		"no nodes":         {"nodes: {}\n", "no nodes"},
		"not yaml":         {"nodes: [\n", "yaml"},
	} {
		path := writeTopology(t, tt.text)
		_, err := ReadTopology(path)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line naming %s and saying %q", name, err, path, tt.want)
		}
	}
	// Keeping a and b's stake but not d: c is cut off.
	topo, err := ReadTopology(writeTopology(t, strings.Replace(fourNodes, "stake: 200\n    location: [0.5", "stake: 1\n    location: [0.5", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topo.Top(3); err == nil || !strings.Contains(err.Error(), "c has no link to a") {
		t.Errorf("top 3 of a, c, b: %v; want c named as cut off", err)
	}
}

// TestWriteTopology: a devnet laid out from a topology has its top nodes'
// stakes, a proxy each way per link of the file and none elsewhere, and
// each pool's topology names only its linked peers, through their proxies.
func TestWriteTopology(t *testing.T) {
	tmpl, _ := LoadTemplate("")
	topo, err := ReadTopology(writeTopology(t, fourNodes))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Write(Spec{Dir: t.TempDir(), Nodes: 4, Template: tmpl, SystemStart: time.Now(), ProxyLinks: true, Topology: topo,
		LinkShape: LinkShape{BytesPerSecond: 12_500_000}})
	if err != nil {
		t.Fatal(err)
	}
	var stakes []uint64
	for _, p := range d.Genesis.Pools {
		stakes = append(stakes, p.Stake)
	}
	if sum := tmpl.PoolStake * 4; stakes[0] != sum*3/8 || stakes[1] != sum*2/8 || stakes[3] != sum/8 {
		t.Errorf("stakes %v, want 3:2:2:1 of %d", stakes, sum)
	}
	if d.Nodes[0].TopologyName != "a" || d.Nodes[3].TopologyName != "b" {
		t.Errorf("node-0 is %s, node-3 %s; want a and b", d.Nodes[0].TopologyName, d.Nodes[3].TopologyName)
	}
	var links []string
	for _, l := range d.Links {
		links = append(links, l.String())
	}
	// a=0, c=1, d=2, b=3; the bandwidth given replaces the file's.
	want := []string{"0→2 69ms 100 Mbit/s", "2→0 69ms 100 Mbit/s", "0→3 12.5ms 100 Mbit/s", "3→0 12.5ms 100 Mbit/s", "1→2 100ms 100 Mbit/s", "2→1 268ms 100 Mbit/s"}
	if !slices.Equal(links, want) {
		t.Errorf("links %q, want %q", links, want)
	}
	for i, peers := range [][]int{{2, 3}, {2}, {0, 1}, {0}} {
		topology, err := config.ReadTopology(filepath.Join(d.Nodes[i].Dir, "topology.json"))
		if err != nil {
			t.Fatal(err)
		}
		var wantPeers []string
		for _, j := range peers {
			wantPeers = append(wantPeers, d.peerAddr(i, j)+"/p2p/"+d.Nodes[j].PeerID.String())
		}
		if !slices.Equal(topology.Peers, wantPeers) || strings.Contains(strings.Join(topology.Peers, " "), d.Nodes[peers[0]].ListenAddr) {
			t.Errorf("%s's peers %q, want %q (through the proxies)", d.Nodes[i].Name, topology.Peers, wantPeers)
		}
	}
}

// TestShippedTopologies: configs/topology-{10,30}.yaml read, connected,
// every link listed by both its nodes at 100 Mbit/s with a ΔQ hop class's
// latency (12, 69 or 268 ms), every node with a few peers.
func TestShippedTopologies(t *testing.T) {
	classes := []time.Duration{12 * time.Millisecond, 69 * time.Millisecond, 268 * time.Millisecond}
	for _, n := range []int{10, 30} {
		file := filepath.Join("..", "..", "..", "configs", "topology-"+strconv.Itoa(n)+".yaml")
		topo, err := ReadTopology(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := topo.Top(n); err != nil || len(topo.Nodes) != n {
			t.Errorf("%s: %d nodes, %v", file, len(topo.Nodes), err)
		}
		seen := map[time.Duration]bool{}
		for _, node := range topo.Nodes {
			if len(node.Producers) < 3 {
				t.Errorf("%s: %s has %d peers", file, node.Name, len(node.Producers))
			}
			for from, s := range node.Producers {
				seen[s.Latency] = true
				var back LinkShape
				for _, other := range topo.Nodes {
					if other.Name == from {
						back = other.Producers[node.Name]
					}
				}
				if !slices.Contains(classes, s.Latency) || s.BytesPerSecond != 12_500_000 || back != s {
					t.Errorf("%s: %s ← %s %v, back %v", file, node.Name, from, s, back)
				}
			}
		}
		if !seen[classes[0]] || !seen[classes[2]] {
			t.Errorf("%s: latencies %v, want from 12 to 268 ms", file, seen)
		}
	}
}

// TestWriteUniformLinks: without a topology, a link shape proxies the
// full mesh, every link both ways shaped alike.
func TestWriteUniformLinks(t *testing.T) {
	tmpl, _ := LoadTemplate("")
	shape := LinkShape{Latency: 40 * time.Millisecond, BytesPerSecond: 12_500_000}
	d, err := Write(Spec{Dir: t.TempDir(), Nodes: 3, Template: tmpl, SystemStart: time.Now(), ProxyLinks: true, LinkShape: shape})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Links) != 6 {
		t.Fatalf("%d links for 3 nodes, want 6", len(d.Links))
	}
	for _, l := range d.Links {
		if l.Shape != shape {
			t.Errorf("link %v, want %v", l, shape)
		}
	}
	if _, err := Write(Spec{Dir: t.TempDir(), Nodes: 3, Template: tmpl, SystemStart: time.Now(), LinkShape: shape}); err == nil {
		t.Error("a link shape without the proxies to emulate it was laid out")
	}
}
