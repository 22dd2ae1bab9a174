package report

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
	"github.com/leiosnode/leiosnode/lab/load"
)

// The chance figure of a run measured beside the capacity, beside its
// report (r.json gives r.chance.png), is a PNG with room for its three
// charts; a run without the chance gets none.
func TestChancePlot(t *testing.T) {
	m, err := capacity.New(capacity.NewParams(time.Second, 0.05, consensus.DefaultLeiosParams()), 195)
	if err != nil {
		t.Fatal(err)
	}
	var offers []capacity.Offer
	for at := time.Duration(0); at < 900*time.Second; at += 10 * time.Millisecond {
		offers = append(offers, capacity.Offer{At: at, Counted: at >= 180*time.Second})
	}
	chance, ok := m.Chance(900, 180*time.Second, 900*time.Second, offers)
	if !ok {
		t.Fatal("no chance")
	}
	c := &CapacityReport{CapacityCheck: load.CapacityCheck{Model: m, Chain: &load.ChainFigures{
		CertifiedShare: 0.6, Latency: &load.Latency{P95Ms: 120_000}, ChainCeilingTxPerSecond: 380, OnChainTxPerSecond: 350,
		Ideal: &capacity.Replay{P95Ms: 110_000}, Chance: &chance,
	}}}
	path := chancePlotFile(filepath.Join(t.TempDir(), "r.json"))
	if filepath.Base(path) != "r.chance.png" {
		t.Errorf("chance plot file %s, want r.chance.png beside r.json", path)
	}
	if drawn, err := writeChancePlot(path, c); err != nil || !drawn {
		t.Fatalf("drawn %v, %v", drawn, err)
	}
	if b := pngBounds(t, path); b.Dx() < 1400 || b.Dy() < 300 {
		t.Errorf("image %v, want three charts' room", b)
	}
	c.Chain.Chance = nil
	if drawn, err := writeChancePlot(path+".none", c); err != nil || drawn {
		t.Errorf("without the chance: drawn %v, %v", drawn, err)
	}
}
