package diffusion

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/leiosnode/leiosnode/lab/bench/benchtest"
	"github.com/leiosnode/leiosnode/lab/bench/output"
)

// TestDiffusionQuick runs `leiosbench diffusion --quick`: every node of
// every run ends up with the closure, never before the physical floor of
// its path (the links are honest), having fetched what it missed; the
// plots are written and the JSON carries the table's figures.
func TestDiffusionQuick(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "diffusion.json")
	benchtest.Run(t, NewCommand(), "--quick", "--plots", dir, "--json", path)
	var r diffusionReport
	if err := output.ReadJSON(path, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Scale) != 1 || len(r.Cells) != 4 {
		t.Fatalf("%d scale runs and %d matrix cells, want 1 and 4", len(r.Scale), len(r.Cells))
	}
	scale := r.Scale[0]
	cells := append([]diffusionCell{scale.Cell}, r.Cells...)
	for _, c := range cells {
		if len(c.ClosureMs) != len(c.Hops) || len(c.FloorMs) != len(c.Hops) {
			t.Fatalf("%s %d%%: %d closure times, %d floors for %d nodes", c.Topology, c.HeldPct, len(c.ClosureMs), len(c.FloorMs), len(c.Hops))
		}
		for i, h := range c.Hops {
			if h <= 0 {
				continue
			}
			// The floor is a single path's: a node that fetches from two
			// neighbours at once may beat it, so it binds where only one
			// path exists (the line, and the forger's neighbours).
			if (c.Topology == "line" || h == 1) && c.ClosureMs[i] < c.FloorMs[i]-1 {
				t.Errorf("%s %d MB %d%% held: node %d (%d hops) held the closure at %.1f ms, under its floor %.1f ms",
					c.Topology, c.ClosureMB, c.HeldPct, i, h, c.ClosureMs[i], c.FloorMs[i])
			}
			if c.Fetched[i] < c.BodyBytes+c.MissingBytes {
				t.Errorf("%s %d%% held: node %d fetched %d bytes, it missed %d", c.Topology, c.HeldPct, i, c.Fetched[i], c.BodyBytes+c.MissingBytes)
			}
		}
		if c.Topology == "line" && len(c.HopMs) != len(c.Hops)-1 {
			t.Errorf("line: %d hop times for %d nodes", len(c.HopMs), len(c.Hops))
		}
	}
	if scale.WithinDeadline == 0 || scale.Percentiles["p50"] <= 0 || scale.Cell.CPUMs <= 0 {
		t.Errorf("scale run: %d nodes within the deadline, p50 %.0f ms, CPU %.0f ms", scale.WithinDeadline, scale.Percentiles["p50"], scale.Cell.CPUMs)
	}
	if m := scale.Memory; runtime.GOOS == "linux" && (m == nil || m.PeakRSSPerNode <= 0 || m.IdleRSSPerNode <= 0) {
		t.Errorf("scale run memory: %+v", m)
	}
	for _, name := range []string{"diffusion-line.png", "diffusion-random.png", "diffusion-scale.png"} {
		benchtest.CheckPNG(t, filepath.Join(dir, name))
	}
	// The tables print what the JSON holds.
	var table bytes.Buffer
	r.Write(&table)
	for _, want := range []string{"scale run: 12 nodes", "topology line", "topology random", "within L_hdr + L_vote"} {
		if !bytes.Contains(table.Bytes(), []byte(want)) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
}
