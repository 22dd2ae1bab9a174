package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// constructors are the node's parts, each by the call that builds it.
// Wiring them together — a chain database on a pipeline, a mempool on the
// chain, forgers on all three — is package node's alone (New, and
// OpenLocal for the benchmarks): a second wiring drifts from the first and
// leaves out what node does on rollback or abandonment. A package may
// build one part on its own, to test or measure that part.
var constructors = map[string]string{
	"chaindb.Open": "chaindb",
	"leios.Open":   "leios",
	"mempool.New":  "mempool",
	"forge.New":    "forge",
}

// construction is a call of one of the constructors in a package's own
// code (tests build what they test as they like).
type construction struct {
	pkg, part string
	file      string
}

// checkWiring returns a breach for every package but node that builds two
// or more of the parts.
func checkWiring(cs []construction) []string {
	byPkg := map[string]map[string]string{} // package → part → a file building it
	for _, c := range cs {
		if c.pkg == "node" {
			continue
		}
		if byPkg[c.pkg] == nil {
			byPkg[c.pkg] = map[string]string{}
		}
		byPkg[c.pkg][c.part] = c.file
	}
	var breaches []string
	for _, pkg := range slices.Sorted(maps.Keys(byPkg)) {
		built := byPkg[pkg]
		if len(built) < 2 {
			continue
		}
		parts := slices.Sorted(maps.Keys(built))
		var where []string
		for _, p := range parts {
			where = append(where, p+" in "+built[p])
		}
		breaches = append(breaches, fmt.Sprintf("%s builds %s: nothing outside node wires the node's parts together (node.OpenLocal does it for benchmarks)",
			pkg, strings.Join(where, ", ")))
	}
	return breaches
}

// loadConstructions finds the constructors' calls in every non-test Go
// file under root.
func loadConstructions(root string) ([]construction, error) {
	var cs []construction
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); file != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(file, ".go") || strings.HasSuffix(file, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		// The name each project import goes by in this file.
		names := map[string]string{}
		for _, spec := range f.Imports {
			target, _ := strconv.Unquote(spec.Path.Value)
			if !strings.HasPrefix(target, module) {
				continue
			}
			pkg := strings.TrimPrefix(target, module)
			name := path.Base(pkg)
			if spec.Name != nil {
				name = spec.Name.Name
			}
			names[name] = pkg
		}
		rel, _ := filepath.Rel(root, file)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if part, ok := constructors[names[x.Name]+"."+sel.Sel.Name]; ok {
				cs = append(cs, construction{pkg: filepath.ToSlash(filepath.Dir(rel)), part: part, file: filepath.ToSlash(rel)})
			}
			return true
		})
		return nil
	})
	return cs, err
}

func repoConstructions(t *testing.T) []construction { return fromRepo(t, loadConstructions) }

func TestOnlyNodeWiresParts(t *testing.T) {
	cs := repoConstructions(t)
	if !slices.ContainsFunc(cs, func(c construction) bool { return c.pkg == "node" && c.part == "chaindb" }) {
		t.Fatalf("node's own chaindb.Open is not found: the search is broken (found %v)", cs)
	}
	for _, breach := range checkWiring(cs) {
		t.Error(breach)
	}
}

// TestWiringRuleCatchesPlantedBreach plants into the repository's real
// constructions a benchmark that opens a chain database on a pipeline of
// its own: caught. One part built alone is not wiring.
func TestWiringRuleCatchesPlantedBreach(t *testing.T) {
	real := repoConstructions(t)
	planted := append(slices.Clone(real),
		construction{pkg: "lab/bench/planted", part: "leios", file: "lab/bench/planted/chain.go"},
		construction{pkg: "lab/bench/planted", part: "chaindb", file: "lab/bench/planted/chain.go"},
	)
	breaches := checkWiring(planted)
	if len(breaches) != 1 || !strings.HasPrefix(breaches[0], "lab/bench/planted builds chaindb in") {
		t.Errorf("planted wiring: breaches %v", breaches)
	}
	alone := append(slices.Clone(real), construction{pkg: "lab/bench/planted", part: "mempool", file: "lab/bench/planted/load.go"})
	if breaches := checkWiring(alone); len(breaches) != 0 {
		t.Errorf("one part built alone reported: %v", breaches)
	}
}
