package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// heavy are the libraries a client of the node's HTTP API must not link:
// the stores' and the host's.
var heavy = []string{"github.com/cockroachdb/pebble", "github.com/libp2p/"}

// lightClients read the API and key files, and link neither Pebble nor
// libp2p, however they reach them.
var lightClients = []string{"api/apiclient", "lab/load", "lab/devnet/ui", "apitypes"}

// linksHeavy returns, for each package under root, the heavy libraries its
// own code (not its tests) imports.
func linksHeavy(root string) (map[string][]string, error) {
	found := make(map[string][]string)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return err
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, spec := range f.Imports {
			target := strings.Trim(spec.Path.Value, `"`)
			if slices.ContainsFunc(heavy, func(h string) bool { return strings.HasPrefix(target, h) }) {
				found[filepath.ToSlash(rel)] = append(found[filepath.ToSlash(rel)], target)
			}
		}
		return nil
	})
	return found, err
}

// heavyLinks returns, for pkg, the chain of project packages through which
// it links a heavy library, or nil.
func heavyLinks(pkg string, imports []imp, direct map[string][]string) []string {
	next := make(map[string][]string)
	for _, i := range imports {
		if !i.test {
			next[i.from] = append(next[i.from], i.to)
		}
	}
	seen := map[string]bool{pkg: true}
	var walk func(p string, path []string) []string
	walk = func(p string, path []string) []string {
		path = append(path, p)
		if libs := direct[p]; len(libs) > 0 {
			return append(path, libs[0])
		}
		for _, q := range next[p] {
			if !seen[q] {
				seen[q] = true
				if found := walk(q, path); found != nil {
					return found
				}
			}
		}
		return nil
	}
	return walk(pkg, nil)
}

// TestClientsLinkNoStoreNorHost: the API's clients, the load tool and the
// devnet's live view link neither Pebble nor libp2p, through any package
// of the project; a planted import of one is caught.
func TestClientsLinkNoStoreNorHost(t *testing.T) {
	imports := repoImports(t)
	direct := fromRepo(t, func(root string) ([]map[string][]string, error) {
		found, err := linksHeavy(root)
		return []map[string][]string{found}, err
	})[0]
	for _, pkg := range lightClients {
		if chain := heavyLinks(pkg, imports, direct); chain != nil {
			t.Errorf("%s links %s", pkg, strings.Join(chain, " → "))
		}
	}
	planted := append(slices.Clone(imports), imp{from: "lab/load", to: "leiosdb", file: "planted.go"})
	if heavyLinks("lab/load", planted, direct) == nil {
		t.Error("a planted import of leiosdb by lab/load: not caught")
	}
}
