package main

import (
	"fmt"
	"image/color"

	"github.com/leiosnode/leiosnode/internal/plots"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotThroughput draws, side by side, on-chain against offered rate (with
// the line where they are equal, and the part through certified EBs) and
// the p50/p95 latency against offered rate, to a PNG at path.
func plotThroughput(r *throughputReport, path string) error {
	rate := plot.New()
	rate.Title.Text = fmt.Sprintf("txs on chain, %d nodes on one 2-core machine", r.Nodes)
	rate.X.Label.Text = "offered, tx/s"
	rate.Y.Label.Text = "on the chain of every node, tx/s"
	lat := plot.New()
	lat.Title.Text = "submit to on chain"
	lat.X.Label.Text = "offered, tx/s"
	lat.Y.Label.Text = "latency, s"

	var onChain, viaRBs, viaEBs, p50, p95 plotter.XYs
	top := 0.0
	for _, c := range r.Cells {
		onChain = append(onChain, plotter.XY{X: c.Offered, Y: c.OnChain})
		viaRBs = append(viaRBs, plotter.XY{X: c.Offered, Y: c.ViaRBs})
		viaEBs = append(viaEBs, plotter.XY{X: c.Offered, Y: c.ViaEBs})
		p50 = append(p50, plotter.XY{X: c.Offered, Y: float64(c.LatencyP50Ms) / 1000})
		p95 = append(p95, plotter.XY{X: c.Offered, Y: float64(c.LatencyP95Ms) / 1000})
		top = max(top, c.Offered, c.OnChain)
	}
	equal, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: top, Y: top}})
	if err != nil {
		return err
	}
	equal.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	equal.Color = color.Gray{Y: 128}
	rate.Add(equal)
	rate.Legend.Add("on chain = offered", equal)
	if err := addSeries(rate, "on chain", onChain, 0); err != nil {
		return err
	}
	if err := addSeries(rate, "through certified EBs", viaEBs, 1); err != nil {
		return err
	}
	if err := addSeries(rate, "through RBs", viaRBs, 4); err != nil {
		return err
	}
	if err := addSeries(lat, "p50", p50, 2); err != nil {
		return err
	}
	if err := addSeries(lat, "p95", p95, 3); err != nil {
		return err
	}
	rate.Legend.Top, rate.Legend.Left = true, true
	lat.Legend.Top, lat.Legend.Left = true, true
	for _, axis := range []*plot.Axis{&rate.X, &rate.Y, &lat.X, &lat.Y} {
		axis.Min = 0
		axis.Tick.Marker = plots.PlainTicks{}
	}
	rate.X.Max, lat.X.Max = top*1.05, top*1.05

	return plots.Save(path, vg.Points(960), vg.Points(400), []*plot.Plot{rate, lat})
}

func addSeries(p *plot.Plot, name string, xys plotter.XYs, style int) error {
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	c := plots.Color(style)
	line.Color, points.Color = c, c
	points.Shape = draw.CircleGlyph{}
	p.Add(line, points)
	p.Legend.Add(name, line, points)
	return nil
}
