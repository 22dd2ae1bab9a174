package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// configsDoc is configs/README.md, from this package's directory.
const configsDoc = "../../configs/README.md"

// TestProtocolSetsAreOneList: the Leios protocol sets have one list of
// names, protocolset's. The references name exactly its values, no more
// and no fewer — the node config table's leiosProtocols row the sets, the
// devnet's --protocols (its usage line and its table row) the sets and
// mixed — and so do --protocols' help and a refused name's error.
func TestProtocolSetsAreOneList(t *testing.T) {
	sets, devnet := protocolset.Names(), layout.ProtocolsNames()
	if want := append(slices.Clone(sets), "mixed"); !slices.Equal(devnet, want) {
		t.Errorf("the devnet's --protocols reads %v, not the sets %v and mixed", devnet, sets)
	}
	same := func(where string, named, want []string) {
		t.Helper()
		named = slices.Compact(slices.Sorted(slices.Values(named)))
		if want = slices.Sorted(slices.Values(want)); !slices.Equal(named, want) {
			t.Errorf("%s names %v, the list is %v", where, named, want)
		}
	}

	row := tableRow(t, configsDoc, "| `leiosProtocols` |")
	same(configsDoc+", the leiosProtocols row", names(row), sets)

	row = tableRow(t, operationsDoc, "| `--protocols SET` |")
	same(operationsDoc+", the --protocols row", names(row), devnet)
	b, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	usage := regexp.MustCompile(`\[--protocols ([\w|]+)\]`).FindSubmatch(b)
	if usage == nil {
		t.Fatalf("%s: no [--protocols a|b|…] in the devnet's usage", operationsDoc)
	}
	same(operationsDoc+", the devnet's usage", strings.Split(string(usage[1]), "|"), devnet)

	flag := newDevnetCommand().Flags().Lookup("protocols")
	if flag == nil {
		t.Fatal("the devnet command has no --protocols")
	}
	if flag.DefValue != protocolset.Both.String() {
		t.Errorf("--protocols defaults to %q", flag.DefValue)
	}
	for _, name := range devnet {
		if !strings.Contains(flag.Usage, name) {
			t.Errorf("--protocols' help does not name %s: %s", name, flag.Usage)
		}
	}
	err = flag.Value.Set("cip,prototype")
	if err == nil || !strings.Contains(err.Error(), strings.Join(sets, ", ")+" or mixed") {
		t.Errorf("--protocols cip,prototype: %v", err)
	}
	for _, name := range devnet {
		if err := flag.Value.Set(name); err != nil || flag.Value.String() != name {
			t.Errorf("--protocols %s: %v, reads back as %s", name, err, flag.Value.String())
		}
	}
}

// tableRow is the line of file that starts with prefix.
func tableRow(t *testing.T, file, prefix string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("%s: no table row %q", file, prefix)
	return ""
}

// names are the code spans of a row that are one lower-case word — the
// values it names (`cip`), not settings (`leiosProtocols`), protocol IDs
// or quoted messages.
func names(row string) []string {
	var found []string
	for _, m := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(row, -1) {
		found = append(found, m[1])
	}
	return found
}
