// Package plots draws the PNG charts of the benchmarks and of the devnet
// report in one style: titled axes with units, a fixed palette by series
// index, measured series solid and reference series (floors, targets)
// dashed, several charts tiled side by side in one file.
//
// It only draws what it is given: it computes no figure of its own beyond
// the fractions of a CDF, and it never reads or writes anything but the
// PNG file it is asked for.
package plots

import (
	"image/color"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// palette is the series colors, by index (Tableau 10).
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
}

// Color is series i's color; the palette repeats after ten.
func Color(i int) color.Color { return palette[i%len(palette)] }

// New is an empty chart whose axes start at zero, labelled without
// needless decimals, with its legend at the top left.
func New(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Min, p.Y.Min = 0, 0
	p.X.Tick.Marker = PlainTicks{}
	p.Y.Tick.Marker = PlainTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	return p
}

// Style says how a series is drawn.
type Style struct {
	Color  int  // palette index
	Dashed bool // a reference (floor, target), not a measurement
	Points bool // mark each point
	Steps  bool // a step line (a CDF, a series of samples held until the next)
}

// Line adds a series; an empty name keeps it out of the legend.
func Line(p *plot.Plot, name string, xys plotter.XYs, s Style) error {
	if len(xys) == 0 {
		return nil
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	line.Color = Color(s.Color)
	line.Width = vg.Points(1.5)
	if s.Dashed {
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		line.Width = vg.Points(1)
	}
	if s.Steps {
		line.StepStyle = plotter.PostStep
	}
	p.Add(line)
	thumbs := []plot.Thumbnailer{line}
	if s.Points {
		points, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		points.Color = Color(s.Color)
		points.Shape = draw.CircleGlyph{}
		p.Add(points)
		thumbs = append(thumbs, points)
	}
	if name != "" {
		p.Legend.Add(name, thumbs...)
	}
	return nil
}

// Band adds a filled band between two series of the same Xs, lower and
// upper, in the series' color, lightened: one layer of a stacked area.
func Band(p *plot.Plot, name string, lower, upper plotter.XYs, s Style) error {
	if len(upper) == 0 || len(lower) != len(upper) {
		return nil
	}
	outline := append(plotter.XYs{}, upper...)
	for i := len(lower) - 1; i >= 0; i-- {
		outline = append(outline, lower[i])
	}
	band, err := plotter.NewPolygon(outline)
	if err != nil {
		return err
	}
	r, g, b, _ := Color(s.Color).RGBA()
	band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0xb0}
	band.LineStyle.Width = 0
	p.Add(band)
	if name != "" {
		p.Legend.Add(name, band)
	}
	return nil
}

// VLine adds a vertical reference line at x (a deadline) from 0 to yMax,
// gray and dotted.
func VLine(p *plot.Plot, name string, x, yMax float64) error {
	return reference(p, name, plotter.XYs{{X: x, Y: 0}, {X: x, Y: yMax}})
}

// HLine adds a horizontal reference line at y from 0 to xMax, gray and
// dotted.
func HLine(p *plot.Plot, name string, y, xMax float64) error {
	return reference(p, name, plotter.XYs{{X: 0, Y: y}, {X: xMax, Y: y}})
}

func reference(p *plot.Plot, name string, xys plotter.XYs) error {
	line, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	line.Color = color.Gray{Y: 96}
	line.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(line)
	if name != "" {
		p.Legend.Add(name, line)
	}
	return nil
}

// CDF is the empirical distribution of values as a step line from
// (first, 1/n) to (last, 1): the fraction of values at or under x. It
// starts at (0, 0), so the first step shows.
func CDF(values []float64) plotter.XYs {
	sorted := slices.Sorted(slices.Values(values))
	xys := plotter.XYs{{X: 0, Y: 0}}
	for i, v := range sorted {
		xys = append(xys, plotter.XY{X: v, Y: float64(i+1) / float64(len(sorted))})
	}
	return xys
}

// Save draws the charts, each row a list of charts side by side (a short
// row leaves its last tiles empty), into a PNG of width × height points at
// path.
func Save(path string, width, height vg.Length, rows ...[]*plot.Plot) error {
	img := vgimg.New(width, height)
	dc := draw.New(img)
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	grid := make([][]*plot.Plot, len(rows))
	for i, r := range rows {
		grid[i] = append(slices.Clone(r), make([]*plot.Plot, cols-len(r))...) // nil: an empty tile
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Points(16), PadY: vg.Points(16), PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, tiles, dc)
	for i, r := range rows {
		for j, p := range r {
			p.Draw(canvases[i][j])
		}
	}
	return WritePNG(img, path)
}

// WritePNG writes a drawn canvas to path as PNG, for a layout Save does not
// make (tiles of unequal widths).
func WritePNG(img *vgimg.Canvas, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// PlainTicks are the default ticks labelled without needless decimals.
type PlainTicks struct{}

func (PlainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			// Six decimals at most, then no trailing zeros: 1.2, not
			// 1.2000000000000002.
			label := strconv.FormatFloat(ticks[i].Value, 'f', 6, 64)
			ticks[i].Label = strings.TrimSuffix(strings.TrimRight(label, "0"), ".")
		}
	}
	return ticks
}

// LogTicks label a log axis at 1, 2 and 5 times each power of ten.
type LogTicks struct{}

func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * p; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
			}
		}
	}
	return ticks
}

// Series adds a measured series, its points marked, in the palette's color
// i.
func Series(p *plot.Plot, name string, xys plotter.XYs, i int) error {
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	c := Color(i)
	line.Color, points.Color = c, c
	points.Shape = draw.CircleGlyph{}
	p.Add(line, points)
	p.Legend.Add(name, line, points)
	return nil
}
