package txcache

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"github.com/leiosnode/leiosnode/internal/plots"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotTxcache draws, side by side, the per-tx time of every lookup batch
// (warm and cold for the txcache and the map, and the memory floor, on a
// log axis, with the cold target of 2.5 × the floor) and of every cold
// InsertBody, as box plots, to a PNG at path.
func plotTxcache(r *txcacheReport, path string) error {
	look := plot.New()
	look.Title.Text = fmt.Sprintf("lookup of an EB-sized batch (%d txs)", r.TxsPerEB)
	look.Y.Label.Text = "time per tx, ns (log scale)"
	look.Y.Scale = plot.LogScale{}
	look.Y.Tick.Marker = plots.LogTicks{}
	ins := plot.New()
	ins.Title.Text = "InsertBody of each EB, cold"
	ins.Y.Label.Text = "time per tx, ns (log scale)"
	ins.Y.Scale = plot.LogScale{}
	ins.Y.Tick.Marker = plots.LogTicks{}

	perTxWarm := func(name string) plotter.Values {
		var v plotter.Values
		if s := r.structure(name); s != nil {
			for _, l := range s.Lookups {
				for _, ns := range l.BatchNs {
					v = append(v, float64(ns)/float64(l.Txs))
				}
			}
		}
		return v
	}
	perTxCold := func(name string, insert bool) plotter.Values {
		var v plotter.Values
		if c := r.cold(name); c != nil {
			for _, s := range c.Samples {
				ns := s.LookupNs
				if insert {
					ns = s.InsertNs
				}
				v = append(v, float64(ns)/float64(c.Txs))
			}
		}
		return v
	}
	boxes := []struct {
		name   string
		values plotter.Values
		style  int
	}{
		{"txcache warm", perTxWarm(nameCache), 0},
		{"txcache cold", perTxCold(nameCache, false), 0},
		{"floor cold", perTxCold(nameFloor, false), 1},
		{"map warm", perTxWarm(nameMap), 3},
		{"map cold", perTxCold(nameMap, false), 3},
	}
	var names []string
	lowest := math.Inf(1)
	for _, b := range boxes {
		if len(b.values) == 0 {
			continue
		}
		lowest = min(lowest, slices.Min(b.values))
		if err := addBox(look, b.values, float64(len(names)), b.style); err != nil {
			return err
		}
		names = append(names, b.name)
	}
	look.NominalX(names...)
	look.Y.Min = logFloor(lowest)
	if floor := r.cold(nameFloor); floor != nil {
		y := 2.5 * floor.Lookup.Median
		line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: y}, {X: float64(len(names)) - 0.5, Y: y}})
		if err != nil {
			return err
		}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		line.Color = color.Gray{Y: 96}
		look.Add(line)
		look.Legend.Add(fmt.Sprintf("target: 2.5 × the floor's median (%.0f ns)", y), line)
		look.Legend.Top, look.Legend.Left = true, true
	}

	var insNames []string
	lowest = math.Inf(1)
	for _, name := range []string{nameCache, nameMap} {
		if v := perTxCold(name, true); len(v) > 0 {
			lowest = min(lowest, slices.Min(v))
			style := 0
			if name == nameMap {
				style = 3
			}
			if err := addBox(ins, v, float64(len(insNames)), style); err != nil {
				return err
			}
			insNames = append(insNames, name)
		}
	}
	ins.NominalX(insNames...)
	ins.Y.Min = logFloor(lowest)

	img := vgimg.New(vg.Points(960), vg.Points(420))
	dc := draw.New(img)
	look.Draw(draw.Crop(dc, 0, -vg.Points(330), 0, 0))
	ins.Draw(draw.Crop(dc, vg.Points(646), 0, 0, 0))
	return plots.WritePNG(img, path)
}

// addBox adds a box plot of values at x in a series colour.
func addBox(p *plot.Plot, values plotter.Values, x float64, style int) error {
	box, err := plotter.NewBoxPlot(vg.Points(36), x, values)
	if err != nil {
		return err
	}
	box.FillColor = plots.Color(style)
	box.MedianStyle.Width = vg.Points(2)
	p.Add(box)
	return nil
}

// logFloor is the largest of 1, 2 and 5 times a power of ten at or below v,
// where a log axis starts so that its lowest tick shows.
func logFloor(v float64) float64 {
	if v <= 0 || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= v {
			return m * p
		}
	}
	return p
}
