package txsubmission

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/leiosnode/leiosnode/internal/plots"
)

// plotTxSubmission draws, side by side against the number of peers (log
// axis), the net CPU per tx served, the share of offered × peers served
// (where the CPU runs out, the cost per tx is what a saturated machine
// gives), and the add path's longest latency: a line for each way of
// serving at each rate, to a PNG at path.
func plotTxSubmission(r *tsReport, path string) error {
	cpu := plot.New()
	cpu.Title.Text = "serving cost per tx served"
	cpu.X.Label.Text = "peers pulling (log scale)"
	cpu.Y.Label.Text = "CPU per tx served, µs (net of the adds)"
	share := plot.New()
	share.Title.Text = "txs served"
	share.X.Label.Text = "peers pulling (log scale)"
	share.Y.Label.Text = "% of offered × peers"
	share.Y.Min = 0
	add := plot.New()
	add.Title.Text = "add path, longest"
	add.X.Label.Text = "peers pulling (log scale)"
	add.Y.Label.Text = "latency of one add, ms (log scale)"
	add.Y.Scale = plot.LogScale{}
	add.Y.Tick.Marker = plots.LogTicks{}
	for _, p := range []*plot.Plot{cpu, share, add} {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plots.LogTicks{}
		p.Legend.Top, p.Legend.Left = true, true
	}
	cpu.Y.Min = 0
	cpu.Legend.Left = false

	style := 0
	for _, variant := range []string{tsLockFree, tsPerItem} {
		for _, offered := range r.Settings.Offered {
			var costs, shares, adds plotter.XYs
			for _, peers := range r.Settings.Peers {
				if c := r.cell(variant, offered, peers); c != nil {
					costs = append(costs, plotter.XY{X: float64(peers), Y: c.NetCPUPerServeNs / 1e3})
					shares = append(shares, plotter.XY{X: float64(peers), Y: 100 * c.ServedShare})
					adds = append(adds, plotter.XY{X: float64(peers), Y: max(float64(c.AddMaxNs), 1e3) / 1e6})
				}
			}
			name := fmt.Sprintf("%s, %d tx/s", variant, offered)
			if err := plots.Series(cpu, name, costs, style); err != nil {
				return err
			}
			if err := plots.Series(share, name, shares, style); err != nil {
				return err
			}
			if err := plots.Series(add, name, adds, style); err != nil {
				return err
			}
			style++
		}
	}

	share.Legend.Top, share.Legend.Left = false, true
	return plots.Save(path, vg.Points(1350), vg.Points(420), []*plot.Plot{cpu, share, add})
}
