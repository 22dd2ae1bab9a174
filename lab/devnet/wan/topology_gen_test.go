package wan

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

// topologySourceEnv names the file TestGenerateTopologies derives
// configs/topology-{10,30}.yaml from: ouroboros-leios's
// data/simulation/pseudo-mainnet/topology-v4-mini.yaml (the top 250 pools
// of mainnet by stake, each at its measured location).
const topologySourceEnv = "LEIOSNODE_TOPOLOGY_SOURCE"

// The ΔQ hop classes of Cardano's network design: one-way latency within
// a region, within a continent, across the world; the distances that
// separate them; and the links' bandwidth, 100 Mbit/s.
const (
	regionKm, continentKm                    = 1000, 5000
	regionMs, continentMs, worldMs           = 12, 69, 268
	generatedBandwidth                       = 12_500_000
	generatedMinPeers10, generatedMinPeers30 = 3, 4
)

// TestGenerateTopologies writes configs/topology-10.yaml and -30.yaml
// from the file $LEIOSNODE_TOPOLOGY_SOURCE names (skipped without it):
// its nodes of most stake within each continent, the continents' seats in
// proportion to the square root of their stake (Sainte-Laguë: four of
// five of the source's stake is in Europe, and a WAN lab wants the other
// continents too), each node keeping its
// location and the source's links among them, then linked to its nearest
// nodes until it has a few peers, and the graph joined where it is not
// connected; each link's latency is its ΔQ class by distance.
func TestGenerateTopologies(t *testing.T) {
	source := os.Getenv(topologySourceEnv)
	if source == "" {
		t.Skipf("set %s to ouroboros-leios's data/simulation/pseudo-mainnet/topology-v4-mini.yaml to write configs/topology-*.yaml", topologySourceEnv)
	}
	src, err := layout.ReadTopology(source)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	var located struct {
		Nodes map[string]struct {
			Location []float64 `yaml:"location"`
		} `yaml:"nodes"`
	}
	if err := yaml.Unmarshal(b, &located); err != nil {
		t.Fatal(err)
	}
	for n, minPeers := range map[int]int{10: generatedMinPeers10, 30: generatedMinPeers30} {
		nodes := byContinent(src.Nodes, func(name string) []float64 { return located.Nodes[name].Location }, n)
		where := make([][]float64, n)
		for i, node := range nodes {
			where[i] = located.Nodes[node.Name].Location
		}
		text := generatedTopology(nodes, where, minPeers, filepath.Base(source))
		if _, err := layout.ReadTopology(writeTemp(t, text)); err != nil {
			t.Fatalf("the generated topology of %d: %v", n, err)
		}
		if err := os.WriteFile(fmt.Sprintf("../../../configs/topology-%d.yaml", n), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func writeTemp(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// byContinent picks n of nodes (sorted by stake): each continent's seats
// by the Sainte-Laguë method on the square roots of the continents'
// stakes, filled with its nodes of most stake; the picked in stake order.
func byContinent(nodes []layout.TopologyNode, where func(string) []float64, n int) []layout.TopologyNode {
	members := map[string][]layout.TopologyNode{}
	stake := map[string]float64{}
	for _, node := range nodes {
		c := continent(where(node.Name))
		members[c] = append(members[c], node)
		stake[c] += float64(node.Stake)
	}
	for c := range stake {
		stake[c] = math.Sqrt(stake[c])
	}
	seats := map[string]int{}
	var picked []layout.TopologyNode
	for range n {
		best := ""
		for c := range members {
			if seats[c] < len(members[c]) && (best == "" || stake[c]/float64(2*seats[c]+1) > stake[best]/float64(2*seats[best]+1) ||
				stake[c]/float64(2*seats[c]+1) == stake[best]/float64(2*seats[best]+1) && c < best) {
				best = c
			}
		}
		picked = append(picked, members[best][seats[best]])
		seats[best]++
	}
	slices.SortFunc(picked, func(a, b layout.TopologyNode) int {
		return cmp.Or(cmp.Compare(b.Stake, a.Stake), cmp.Compare(a.Name, b.Name))
	})
	return picked
}

// continent is roughly where a [longitude, latitude] point lies.
func continent(p []float64) string {
	lon, lat := p[0], p[1]
	switch {
	case lon >= 110 && lat < -10:
		return "Oceania"
	case lon >= -25 && lon < 45 && lat >= 35:
		return "Europe"
	case lon >= -20 && lon < 55 && lat < 35:
		return "Africa"
	case lon >= 45:
		return "Asia"
	case lon < -30 && lat >= 15:
		return "North America"
	case lon < -30:
		return "South America"
	}
	return "Europe"
}

// generatedTopology is the text of the topology of nodes (by stake) at
// where ([longitude, latitude] each), every node with at least minPeers.
func generatedTopology(nodes []layout.TopologyNode, where [][]float64, minPeers int, source string) string {
	n := len(nodes)
	index := map[string]int{}
	for i, node := range nodes {
		index[node.Name] = i
	}
	linked := make([][]bool, n)
	for i := range linked {
		linked[i] = make([]bool, n)
	}
	link := func(i, j int) { linked[i][j], linked[j][i] = true, true }
	fromSource := 0
	for i, node := range nodes {
		for name := range node.Producers {
			if j, ok := index[name]; ok && !linked[i][j] {
				link(i, j)
				fromSource++
			}
		}
	}
	km := func(i, j int) float64 { return greatCircleKm(where[i], where[j]) }
	degree := func(i int) int {
		return len(slices.DeleteFunc(slices.Clone(linked[i]), func(b bool) bool { return !b }))
	}
	for i := range n {
		others := make([]int, 0, n-1)
		for j := range n {
			if j != i {
				others = append(others, j)
			}
		}
		slices.SortStableFunc(others, func(a, b int) int { return cmp.Compare(km(i, a), km(i, b)) })
		for _, j := range others {
			if degree(i) >= minPeers {
				break
			}
			link(i, j)
		}
	}
	joined := 0
	for {
		reach := reachable(linked)
		if !slices.Contains(reach, false) {
			break
		}
		a, b := -1, -1 // the closest pair across the cut
		for i := range n {
			for j := range n {
				if reach[i] && !reach[j] && (a < 0 || km(i, j) < km(a, b)) {
					a, b = i, j
				}
			}
		}
		link(a, b)
		joined++
	}

	var w strings.Builder
	fmt.Fprintf(&w, `# %d block producers on an emulated wide-area network, for devnet --topology
# (the Leios simulators' topology format; see docs/operations.md).
#
# Derived from ouroboros-leios data/simulation/pseudo-mainnet/
# %s (mainnet's top 250 pools by stake, each at its
# measured location) by TestGenerateTopologies in lab/devnet/wan: each
# continent's pools of most stake, the continents' seats in proportion to the
# square root of their stake (Sainte-Laguë), renamed node-0… by stake, with
# their stakes and locations ([longitude, latitude]). Links: the source's %d
# among them, then each node's nearest until it has %d peers, then %d joining
# the graph where it was cut. Each link is listed by both its nodes, at
# %d bytes/s (100 Mbit/s) each way, its one-way latency Cardano's ΔQ hop
# class by distance: %d ms within %d km (a region), %d ms within %d km (a
# continent), %d ms across the world.
`, n, source, fromSource, minPeers, joined, generatedBandwidth, regionMs, regionKm, continentMs, continentKm, worldMs)
	w.WriteString("nodes:\n")
	for i, node := range nodes {
		fmt.Fprintf(&w, "  node-%d: # %s of the source, %s\n    stake: %d\n    location: [%g, %g]\n    producers:\n",
			i, node.Name, continent(where[i]), node.Stake, where[i][0], where[i][1])
		for j := range n {
			if linked[i][j] {
				fmt.Fprintf(&w, "      node-%d: {latency-ms: %d, bandwidth-bytes-per-second: %d} # %.0f km\n", j, latencyClass(km(i, j)), generatedBandwidth, km(i, j))
			}
		}
	}
	return w.String()
}

// reachable are the nodes with a path to the first.
func reachable(linked [][]bool) []bool {
	seen := make([]bool, len(linked))
	seen[0] = true
	for queue := []int{0}; len(queue) > 0; queue = queue[1:] {
		for j, ok := range linked[queue[0]] {
			if ok && !seen[j] {
				seen[j] = true
				queue = append(queue, j)
			}
		}
	}
	return seen
}

func latencyClass(km float64) int {
	switch {
	case km <= regionKm:
		return regionMs
	case km <= continentKm:
		return continentMs
	}
	return worldMs
}

// greatCircleKm is the distance between two [longitude, latitude] points
// on the Earth.
func greatCircleKm(a, b []float64) float64 {
	rad := func(deg float64) float64 { return deg * math.Pi / 180 }
	lat1, lat2 := rad(a[1]), rad(b[1])
	dLat, dLon := lat2-lat1, rad(b[0]-a[0])
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1)*math.Cos(lat2)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * 6371 * math.Asin(math.Sqrt(h))
}
