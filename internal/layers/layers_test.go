package layers

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/leiosnode/leiosnode/"

// rank orders the project's packages, sub-packages included: a package may
// import only packages of a strictly lower rank. Every package directory
// must be listed, so a new package is placed on purpose.
var rank = map[string]int{
	// Foundations: wire types, rules, crypto helpers, files.
	"vrf":                     0,
	"apitypes":                0, // the HTTP API's JSON and vocabularies: imports nothing of ours
	"bls":                     0,
	"internal/strictjson":     0, // JSON files decoded strictly: no key twice, no unknown field
	"config":                  1,
	"leios/protocolset":       0, // the Leios protocol sets' names: config holds one, notify and fetch serve by it
	"internal/version":        0,
	"internal/plots":          0,
	"internal/cpuwork":        0, // which work the CPU does; the node's parts label themselves
	"internal/simtrace":       0, // the Leios simulators' trace format, written and checked
	"internal/freeport":       0, // loopback ports no outgoing connection takes
	"internal/pause":          0, // a wait that ends with its context
	"internal/logging":        0, // one-line errors; repeated lines limited per peer
	"internal/waittest":       0, // tests' waits, bounded by what they wait for and a hang's ceiling
	"internal/metricstest":    0, // tests' reads of what a Prometheus registry gathers
	"block":                   1,
	"block/blocktest":         2,
	"ledger":                  1,
	"keys":                    2, // addresses are ledger's
	"keys/peerid":             2, // a node key's libp2p peer ID, apart so that key readers link no libp2p
	"consensus":               2,
	"consensus/consensustest": 3, // pools, a genesis, VRF-proved headers for tests
	// The node's edge: whether txs are taken in, from figures it is handed.
	"admission":          2,
	"internal/benchkeys": 2,
	// What both Pebble stores share: opening, the network stamp, faults.
	"internal/pebblestore":           2,
	"internal/pebblestore/faulttest": 1, // imports no package of ours: the store's own tests use it
	// The mini-protocol engine, and the host that runs it.
	"network/protocol":              2,
	"network/protocol/protocoltest": 3,
	"network/internal/ping":         3,
	"network":                       3,
	"network/internal/hosttest":     4,
	// Stores.
	"chaindb": 3,
	"leiosdb": 3,
	"txcache": 3,
	"mempool": 3,
	// Block production, and the mini-protocols.
	"forge":                      4,
	"network/blockfetch":         4,
	"network/txsubmission":       4,
	"network/peersharing":        4,
	"notify":                     4,
	"fetch":                      4,
	"network/chainsync":          5,
	"consensus/capacity":         5, // the structural ceiling from a genesis; its tests hold its bounds to the forge's
	"network/internal/chaintest": 6,
	// The Leios pipeline; the node's parts above it; the binaries.
	"leios":              6,
	"api":                7,
	"api/apiclient":      8,
	"node":               8,
	"cmd/leiosnode":      12,
	"cmd/leiosbench":     13,
	"internal/layers":    14,
	"internal/testtimes": 0, // the test command's summary of go test -json: slowest tests per package

	// The lab: the tools that stand on the node — the devnet, the tx
	// firehose, the in-process network harness, the benchmarks. Nothing
	// outside lab/ and cmd/ imports them.
	//
	// A generated network's files: genesis, keys, configs, topologies; its
	// nodes run as OS processes; its emulated links.
	"lab/devnet/layout":     3,
	"lab/devnet/supervisor": 4,
	"lab/devnet/wan":        4,
	// Leios nodes in one process, on shaped links (the diffusion benchmark's).
	"lab/leiosnet": 7,
	// The hostile peer and HTTP client the chaos mode's attacks run, on
	// the node's public message types.
	"lab/hostile": 7,
	// The devnet's chaos mode, on its processes, links and API client.
	"lab/devnet/chaos": 9,
	// The tx firehose, an operator's tool on any network's APIs.
	"lab/load": 9,
	// The devnet's report and its live view, built from what Run
	// observed; then Run itself.
	"lab/devnet/report": 10,
	"lab/devnet/ui":     10,
	"lab/devnet":        11,
	// The benchmarks' packages: what they all write, where they ran, what
	// their tests check of a run's files and the binary the process
	// benchmarks run are foundations.
	"lab/bench/output":    0,
	"lab/bench/machine":   0,
	"lab/bench/benchtest": 0,
	"lab/bench/nodebin":   0,
	// Each benchmark, beside its baselines (the throughput and sync
	// benchmarks run devnets); cmd/leiosbench holds the commands.
	"lab/bench/txchains":     2, // the simulated chain the mempool benchmarks load
	"lab/bench/votes":        12,
	"lab/bench/txcache":      12,
	"lab/bench/mempool":      12,
	"lab/bench/txsubmission": 12,
	"lab/bench/diffusion":    12,
	"lab/bench/throughput":   12,
	"lab/bench/sync":         12,
}

var (
	stores    = []string{"chaindb", "leiosdb", "txcache", "mempool"}
	protocols = []string{"network/chainsync", "network/blockfetch", "network/txsubmission", "network/peersharing", "notify", "fetch"}
	// testSupport are fixtures for the tests of the packages they build
	// on: a test file may import them whatever their rank (Go's external
	// test packages allow it, and the fixture itself still points down).
	testSupport = []string{"consensus/consensustest", "network/internal/chaintest", "network/internal/hosttest", "network/internal/ping", "network/protocol/protocoltest", "internal/waittest"}
)

// rule forbids what ranks allow. It applies to a package's own code, not to
// its tests, which may build on anything below them.
type rule struct {
	name string
	// applies reports whether the rule governs an import from → to.
	applies   func(from, to string) bool
	forbidden bool
}

var rules = []rule{
	{
		name: "the host knows peers, streams, scoring and the engine — no chain types, no store, no protocol, no Leios protocol set",
		applies: func(from, to string) bool {
			return from == "network" && (slices.Contains([]string{"block", "ledger", "consensus", "leios/protocolset"}, to) ||
				slices.Contains(stores, to) || slices.Contains(protocols, to))
		},
	},
	{
		name: "a protocol package never imports the pipeline, the API or the node",
		applies: func(from, to string) bool {
			return slices.Contains(protocols, from) && slices.Contains([]string{"leios", "api", "node"}, to)
		},
	},
	{
		name: "a store never imports another store or a protocol",
		applies: func(from, to string) bool {
			return slices.Contains(stores, from) && (slices.Contains(stores, to) || slices.Contains(protocols, to))
		},
	},
	{
		name: "forge is written in block and ledger types and its own interfaces, not a store's",
		applies: func(from, to string) bool {
			return from == "forge" && slices.Contains(stores, to)
		},
	},
	{
		name: "the harness builds the pipeline with leios.Open and never re-wires its parts",
		applies: func(from, to string) bool {
			return from == "lab/leiosnet" && slices.Contains([]string{"leiosdb", "fetch", "notify"}, to)
		},
	},
	{
		name: "nothing imports node but the binaries and the benchmarks (they serve txs through its adapters)",
		applies: func(from, to string) bool {
			return to == "node" && from != "cmd/leiosnode" && from != "cmd/leiosbench" && !strings.HasPrefix(from, "lab/bench/")
		},
	},
	{
		name: "the lab stands on the node: only the lab and the binaries import lab/",
		applies: func(from, to string) bool {
			return strings.HasPrefix(to, "lab/") && !strings.HasPrefix(from, "lab/") && !strings.HasPrefix(from, "cmd/")
		},
	},
	{
		name: "the API's clients read its wire types, never its server",
		applies: func(from, to string) bool {
			client := from == "api/apiclient" || from == "lab/load" || from == "lab/devnet" || strings.HasPrefix(from, "lab/devnet/")
			return client && to == "api" || from == "apitypes"
		},
	},
	{
		name: "the devnet's live view is handed what Run polled and never dials a node",
		applies: func(from, to string) bool {
			return from == "lab/devnet/ui" && slices.Contains([]string{"api/apiclient", "lab/load"}, to)
		},
	},
}

// imp is one import of a project package by another.
type imp struct {
	from, to string
	file     string
	test     bool // from a _test.go file
}

// check returns every breach of the ranks and the rules.
func check(imports []imp) []string {
	var breaches []string
	for _, i := range imports {
		fromRank, ok := rank[i.from]
		if !ok {
			breaches = append(breaches, fmt.Sprintf("%s: package %s has no rank in layers_test.go", i.file, i.from))
			continue
		}
		toRank, ok := rank[i.to]
		if !ok {
			breaches = append(breaches, fmt.Sprintf("%s imports %s, which has no rank", i.file, i.to))
			continue
		}
		if toRank >= fromRank && !(i.test && slices.Contains(testSupport, i.to)) {
			breaches = append(breaches, fmt.Sprintf("%s: %s (rank %d) imports %s (rank %d): imports must point down",
				i.file, i.from, fromRank, i.to, toRank))
		}
		if i.test {
			continue
		}
		for _, r := range rules {
			if r.applies(i.from, i.to) {
				breaches = append(breaches, fmt.Sprintf("%s: %s imports %s: %s", i.file, i.from, i.to, r.name))
			}
		}
	}
	return breaches
}

// loadImports parses the import lists of every Go file under root.
func loadImports(root string) ([]imp, error) {
	var imports []imp
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		from := filepath.ToSlash(filepath.Dir(rel))
		if from == "." {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if _, ok := rank[from]; !ok {
			imports = append(imports, imp{from: from, to: from, file: filepath.ToSlash(rel)})
		}
		for _, spec := range f.Imports {
			target := strings.Trim(spec.Path.Value, `"`)
			if !strings.HasPrefix(target, module) {
				continue
			}
			to := strings.TrimPrefix(target, module)
			if to != from {
				imports = append(imports, imp{from: from, to: to, file: filepath.ToSlash(rel), test: strings.HasSuffix(path, "_test.go")})
			}
		}
		return nil
	})
	return imports, err
}

func repoImports(t *testing.T) []imp { return fromRepo(t, loadImports) }

// fromRepo is what load finds under the repository's root.
func fromRepo[T any](t *testing.T, load func(root string) ([]T, error)) []T {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found, err := load(root)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestImportRules(t *testing.T) {
	for _, breach := range check(repoImports(t)) {
		t.Error(breach)
	}
}

// TestRulesCatchPlantedViolations plants, into the repository's real import
// graph, one violation of each rule and of the ranks, and checks that each
// is caught — and that a test file is held to the ranks only.
func TestRulesCatchPlantedViolations(t *testing.T) {
	real := repoImports(t)
	for _, tc := range []struct {
		plant imp
		want  string // part of the breach
	}{
		{imp{from: "block", to: "chaindb"}, "imports must point down"},
		{imp{from: "chaindb", to: "leios"}, "imports must point down"},
		{imp{from: "newpkg", to: "block"}, "has no rank"},
		{imp{from: "network", to: "block"}, rules[0].name},
		{imp{from: "network", to: "mempool"}, rules[0].name},
		{imp{from: "network", to: "leios/protocolset"}, rules[0].name},
		{imp{from: "notify", to: "leios"}, rules[1].name},
		{imp{from: "fetch", to: "node"}, rules[1].name},
		{imp{from: "mempool", to: "chaindb"}, rules[2].name},
		{imp{from: "forge", to: "chaindb"}, rules[3].name},
		{imp{from: "forge", to: "mempool"}, rules[3].name},
		{imp{from: "lab/leiosnet", to: "fetch"}, rules[4].name},
		{imp{from: "lab/devnet", to: "node"}, rules[5].name},
		{imp{from: "lab/load", to: "node"}, rules[5].name},
		{imp{from: "api", to: "node"}, rules[5].name},
		{imp{from: "leios", to: "lab/bench/output"}, rules[6].name},
		{imp{from: "consensus/capacity", to: "lab/load"}, rules[6].name},
		{imp{from: "api/apiclient", to: "api"}, rules[7].name},
		{imp{from: "lab/load", to: "api"}, rules[7].name},
		{imp{from: "lab/devnet", to: "api"}, rules[7].name},
		{imp{from: "lab/devnet/report", to: "api"}, rules[7].name},
		{imp{from: "lab/devnet/ui", to: "api"}, rules[7].name},
		{imp{from: "apitypes", to: "vrf"}, rules[7].name},
		{imp{from: "lab/devnet/ui", to: "api/apiclient"}, rules[8].name},
		{imp{from: "lab/devnet/ui", to: "lab/load"}, rules[8].name},
	} {
		tc.plant.file = "planted.go"
		breaches := check(append(slices.Clone(real), tc.plant))
		if !slices.ContainsFunc(breaches, func(b string) bool {
			return strings.HasPrefix(b, "planted.go") && strings.Contains(b, tc.want)
		}) {
			t.Errorf("planted %s → %s: not caught as %q; breaches: %v", tc.plant.from, tc.plant.to, tc.want, breaches)
		}
	}
	// A test may import what a rule forbids its package, if it points down,
	// and a test fixture built on its package; never anything else above.
	if breaches := check([]imp{
		{from: "forge", to: "chaindb", file: "forge_test.go", test: true},
		{from: "network", to: "network/internal/hosttest", file: "host_test.go", test: true},
	}); len(breaches) != 0 {
		t.Errorf("a test file held to the rules: %v", breaches)
	}
	if breaches := check([]imp{{from: "block", to: "chaindb", file: "block_test.go", test: true}}); len(breaches) != 1 {
		t.Errorf("a test file importing upward: %v", breaches)
	}
}
