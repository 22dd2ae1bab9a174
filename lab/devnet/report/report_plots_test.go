package report

import (
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/load"
)

// Txs reach the chain at 100 a second, polled once a second: the plotted
// rate is 100 tx/s once a poll has one before it, and a node that did not
// answer leaves a gap in its series, not a zero.
func TestReportPlotsFromPolls(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	s := NewStatusSeries([]layout.Node{{Name: "node-0"}, {Name: "node-1"}}, start, nil)
	for i := range 12 {
		polls := []apiclient.StatusPoll{
			{Status: &apitypes.Status{Tip: apitypes.TipStatus{BlockNumber: uint64(i / 3)}, TxsOnChain: uint64(100 * i), Mempool: apitypes.MempoolStatus{Txs: 50}}},
			{Status: &apitypes.Status{Tip: apitypes.TipStatus{BlockNumber: uint64(i / 3)}, TxsOnChain: uint64(100 * i)}},
		}
		if i == 5 {
			polls[1] = apiclient.StatusPoll{}
		}
		s.Observe(start.Add(time.Duration(i)*time.Second), polls)
	}
	rate := s.onChainRate(5 * time.Second)
	if len(rate) != 11 {
		t.Fatalf("%d rate points, want 11 (every poll after the first)", len(rate))
	}
	for _, p := range rate {
		if math.Abs(p.Y-100) > 1e-9 {
			t.Errorf("rate at %.0f s: %.2f tx/s, want 100", p.X, p.Y)
		}
	}
	if s.samples[5].nodes[1] != nil {
		t.Error("a node that did not answer has a sample")
	}

	g := &consensus.Genesis{SlotLengthMs: 100, Leios: consensus.DefaultLeiosParams()}
	leios := &LeiosReport{EBs: []EBDiffusion{
		{ClosureMs: map[string]int64{"node-0": 120, "node-1": 300}},
		{ClosureMs: map[string]int64{"node-0": 90}},
	}}
	path := reportPlotsFile(filepath.Join(t.TempDir(), "r.json"))
	if filepath.Base(path) != "r.png" {
		t.Errorf("plots file %s, want r.png beside r.json", path)
	}
	if err := writeReportPlots(path, s, g, leios, 100); err != nil {
		t.Fatal(err)
	}
	if b := pngBounds(t, path); b.Dx() < 900 || b.Dy() < 600 {
		t.Errorf("image %v, want four charts' room", b)
	}
}

// The load figure of a run, beside its report (r.json gives r.load.png),
// is a PNG with room for its six charts, whether the nodes measured their
// CPU by work or not.
func TestLoadPlots(t *testing.T) {
	r := fakeLoadRun()
	span, _ := load.NewSpan(loadStart, 10*time.Second, loadStart.Add(70*time.Second))
	path := loadPlotsFile(filepath.Join(t.TempDir(), "r.json"))
	if filepath.Base(path) != "r.load.png" {
		t.Errorf("load plots file %s, want r.load.png beside r.json", path)
	}
	for _, byWork := range []bool{true, false} {
		if !byWork {
			for _, s := range r.samples {
				s.nodes[0].cpuByWork = nil
			}
		}
		if err := writeLoadPlots(path, newTimeline(r, 10*time.Second), newTargets(r, span, 10*time.Second, nil)); err != nil {
			t.Fatal(err)
		}
		if b := pngBounds(t, path); b.Dx() < 1400 || b.Dy() < 800 {
			t.Errorf("image %v, want six charts' room", b)
		}
	}
}

// pngBounds are the bounds of the PNG image in the file at path.
func pngBounds(t *testing.T, path string) image.Rectangle {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	return img.Bounds()
}
