package sync

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/leiosnode/leiosnode/internal/plots"
)

// plotSync draws the sync curves, as the consensus team plots sync
// progress: the slot of the adopted tip against time, and txs on chain
// against time, for each sync and (dashed) the single-core validation.
func plotSync(r *syncReport, path string) error {
	c := r.Chain
	slots := plots.New(fmt.Sprintf("sync of %d blocks, %d txs", c.Blocks, c.Txs), "s from the node's start", "slot of the adopted tip")
	txs := plots.New("txs on the synced chain", "s from the node's start", "txs on chain")
	series := []struct {
		name string
		run  *syncRun
		s    plots.Style
	}{{"validation, one core", r.Validation, plots.Style{Color: 7, Dashed: true}}}
	for i, run := range r.Runs {
		series = append(series, struct {
			name string
			run  *syncRun
			s    plots.Style
		}{fmt.Sprintf("sync from %d peer(s), %s", run.Peers, run.Protocols), run, plots.Style{Color: i, Steps: true}})
	}
	for _, s := range series {
		var bySlot, byTxs plotter.XYs
		for _, p := range s.run.Curve {
			bySlot = append(bySlot, plotter.XY{X: p.Seconds, Y: float64(p.Slot)})
			byTxs = append(byTxs, plotter.XY{X: p.Seconds, Y: float64(p.Txs)})
		}
		if err := plots.Line(slots, s.name, bySlot, s.s); err != nil {
			return err
		}
		if err := plots.Line(txs, s.name, byTxs, s.s); err != nil {
			return err
		}
	}
	return plots.Save(path, vg.Points(960), vg.Points(400), []*plot.Plot{slots, txs})
}
