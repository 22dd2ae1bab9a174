package mempool

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/leiosnode/leiosnode/internal/plots"
)

// plotMempool draws, side by side for every cell of the matrix, the reader
// stall of both mempools (max and p99, on a log axis, with the 1 ms target)
// and their throughput as a share of min(offered, ceiling) (with the 95 %
// target), to a PNG at path.
func plotMempool(r *mempoolReport, path string) error {
	stall := plot.New()
	stall.Title.Text = "reader stall per cell (forge and tx-submission walks)"
	stall.X.Label.Text = "offered tx/s × peers"
	stall.Y.Label.Text = "stall, ms (log scale)"
	stall.Y.Scale = plot.LogScale{}
	stall.Y.Tick.Marker = plots.LogTicks{}
	thr := plot.New()
	thr.Title.Text = "throughput per cell"
	thr.X.Label.Text = "offered tx/s × peers"
	thr.Y.Label.Text = "% of min(offered, serial ceiling)"

	var names []string
	top := 110.0
	for _, o := range r.Settings.Offered {
		for _, p := range r.Settings.Peers {
			names = append(names, fmt.Sprintf("%d×%d", o, p))
		}
	}
	for k, kind := range []string{mpDouble, mpSingle} {
		var maxes, p99s, shares plotter.XYs
		x := 0
		for _, o := range r.Settings.Offered {
			for _, p := range r.Settings.Peers {
				if c := r.cell(kind, o, p); c != nil {
					// A stall below a microsecond is drawn at one, so the
					// log axis can hold it.
					maxes = append(maxes, plotter.XY{X: float64(x), Y: max(float64(c.MaxReaderStallNs), 1e3) / 1e6})
					p99 := max(c.ForgeStall.P99Ns, c.ServeStall.P99Ns)
					p99s = append(p99s, plotter.XY{X: float64(x), Y: max(float64(p99), 1e3) / 1e6})
					shares = append(shares, plotter.XY{X: float64(x), Y: 100 * c.ThroughputTxS / c.ExpectedTxS})
					top = max(top, 100*c.ThroughputTxS/c.ExpectedTxS+5)
				}
				x++
			}
		}
		style := []int{0, 3}[k]
		if err := plots.Series(stall, kind+", max", maxes, style); err != nil {
			return err
		}
		p99, err := plotter.NewScatter(p99s)
		if err != nil {
			return err
		}
		p99.Color, p99.Shape = plots.Color(style), draw.RingGlyph{}
		stall.Add(p99)
		stall.Legend.Add(kind+", p99", p99)
		if err := plots.Series(thr, kind, shares, style); err != nil {
			return err
		}
	}
	last := float64(len(names)) - 0.5
	if err := addTarget(stall, "target for the double-buffered: 1 ms", 1, last); err != nil {
		return err
	}
	if err := addTarget(thr, "target for the double-buffered: 95 %", 95, last); err != nil {
		return err
	}
	stall.NominalX(names...)
	thr.NominalX(names...)
	thr.Y.Min, thr.Y.Max = 0, top
	stall.Legend.Top, stall.Legend.Left = true, true
	thr.Legend.Left = true

	return plots.Save(path, vg.Points(1100), vg.Points(440), []*plot.Plot{stall, thr})
}

// addTarget draws a dashed horizontal line at y across the cells.
func addTarget(p *plot.Plot, name string, y, last float64) error {
	line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: y}, {X: last, Y: y}})
	if err != nil {
		return err
	}
	line.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	line.Color = color.Gray{Y: 96}
	p.Add(line)
	p.Legend.Add(name, line)
	return nil
}
