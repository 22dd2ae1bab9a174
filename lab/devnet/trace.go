package devnet

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

// tracedLine is one line of a node's trace, with its time.
type tracedLine struct {
	time float64
	raw  []byte
}

// mergeTraces writes the traces every node of d wrote (layout.TraceFileName
// in its directory) into one file, ordered by time — the nodes' traces
// share the system start's clock — with each node's peer ID replaced by
// its name, as the simulators name nodes. It returns the events merged.
func mergeTraces(d *layout.Layout, path string) (int, error) {
	nodes := append(append([]layout.Node{}, d.Nodes...), d.Relays...)
	var pairs []string // "peer ID", "name", …
	for _, n := range nodes {
		pairs = append(pairs, `"`+n.PeerID.String()+`"`, `"`+n.Name+`"`)
	}
	names := strings.NewReplacer(pairs...)
	var lines []tracedLine
	for _, n := range nodes {
		f, err := os.Open(filepath.Join(n.Dir, layout.TraceFileName))
		if err != nil {
			return 0, fmt.Errorf("%s's trace: %w", n.Name, err)
		}
		read, err := readTrace(f, names)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("%s's trace: %w", n.Name, err)
		}
		lines = append(lines, read...)
	}
	slices.SortStableFunc(lines, func(a, b tracedLine) int { return cmp.Compare(a.time, b.time) })
	out, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("--trace: %w", err)
	}
	w := bufio.NewWriter(out)
	for _, l := range lines {
		w.Write(l.raw)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return 0, fmt.Errorf("--trace %s: %w", path, err)
	}
	return len(lines), out.Close()
}

// readTrace reads a node's trace, naming the nodes by name. A last line cut
// short (a node killed while writing) is left out.
func readTrace(r io.Reader, names *strings.Replacer) ([]tracedLine, error) {
	var lines []tracedLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var l struct {
			Time float64 `json:"time_s"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue
		}
		lines = append(lines, tracedLine{time: l.Time, raw: []byte(names.Replace(sc.Text()))})
	}
	return lines, sc.Err()
}
