package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/leiosnode/leiosnode/"

// rank orders the project's packages: a package may import only packages of
// a strictly lower rank. Every package directory must be listed, so a new
// package is placed on purpose.
var rank = map[string]int{
	// Foundations: wire types, rules and crypto helpers.
	"vrf":                0,
	"keys":               1,
	"block":              1,
	"ledger":             1,
	"internal/benchkeys": 2,
	"consensus":          2,
	"config":             2,
	// Stores: never import a protocol.
	"chaindb":           3,
	"leiosdb":           3,
	"txcache":           3,
	"mempool":           3,
	"forge":             4,
	"network":           4,
	"notify":            5,
	"fetch":             5,
	"leios":             6,
	"api":               7,
	"internal/leiosnet": 7,
	"internal/devnet":   8,
	"node":              8,
	"cmd/leiosnode":     9,
	"cmd/leiosbench":    9,
	"internal/layers":   10,
}

func TestImportDirection(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		from := packageOf(rel)
		fromRank, ok := rank[from]
		if !ok {
			t.Errorf("%s: package %s has no rank in layers_test.go", path, from)
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			target := strings.Trim(imp.Path.Value, `"`)
			if !strings.HasPrefix(target, module) {
				continue
			}
			to := packageOf(strings.TrimPrefix(target, module))
			if to == from {
				continue
			}
			toRank, ok := rank[to]
			if !ok {
				t.Errorf("%s imports %s, which has no rank", rel, to)
				continue
			}
			if toRank >= fromRank {
				t.Errorf("%s (rank %d) imports %s (rank %d): imports must point down", rel, fromRank, to, toRank)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// packageOf maps a directory to the ranked package that owns it: a
// sub-package belongs to its top-level package (network/chainsync is part of
// network), except under cmd/ and internal/ where the second element names it.
func packageOf(dir string) string {
	parts := strings.Split(dir, "/")
	if (parts[0] == "cmd" || parts[0] == "internal") && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}
