package layers

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// architecture is ARCHITECTURE.md, from this package's directory.
const architecture = "../../ARCHITECTURE.md"

// drawing is the fenced block of the "## Layers" section of the Markdown
// text md: the drawing of the layers.
func drawing(md string) string {
	_, section, _ := strings.Cut(md, "\n## Layers\n")
	_, block, _ := strings.Cut(section, "\n```\n")
	block, _, _ = strings.Cut(block, "\n```")
	return block
}

// undrawn returns the ranked packages the drawing does not name. Test
// fixtures and this package are left out: the document says where they sit.
func undrawn(drawing string) []string {
	var missing []string
	for pkg := range rank {
		if isFixture(pkg) {
			continue
		}
		if !regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(pkg) + `(\s|$)`).MatchString(drawing) {
			missing = append(missing, pkg)
		}
	}
	slices.Sort(missing)
	return missing
}

func isFixture(pkg string) bool {
	return pkg == "internal/layers" || slices.Contains(testSupport, pkg) ||
		(strings.HasSuffix(pkg, "test") && pkg != "lab/bench/benchtest")
}

// TestDrawingNamesEveryPackage: the layers drawn in ARCHITECTURE.md name
// every package the ranks above know, so a package is never added to the
// house without being placed in its map.
func TestDrawingNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	d := drawing(string(b))
	if d == "" {
		t.Fatalf("%s: no fenced drawing under \"## Layers\"", architecture)
	}
	if missing := undrawn(d); len(missing) > 0 {
		t.Errorf("%s's drawing of the layers does not name %q: add each on the line of its layer", architecture, missing)
	}
	// A package the drawing leaves out is caught.
	if missing := undrawn(strings.ReplaceAll(d, "admission (the edge)", "")); !slices.Equal(missing, []string{"admission"}) {
		t.Errorf("admission taken out of the drawing: found missing %q", missing)
	}
}
