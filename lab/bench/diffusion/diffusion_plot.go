package diffusion

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/leiosnode/leiosnode/internal/plots"
)

// diffusionPlots are the report's plots by file name: the line's closure
// time per hop (diffusion-line.png) and the random graph's CDF over its
// nodes (diffusion-random.png), each a chart per closure size with a
// series per held share and its floor dashed; and the scale runs' CDF
// with the voting deadline, beside their closure times by hops from the
// forger (diffusion-scale.png).
func diffusionPlots(r *diffusionReport) map[string]func(path string) error {
	out := map[string]func(string) error{}
	for _, topology := range []string{"line", "random"} {
		if !slices.Contains(r.Flags.Topologies, topology) {
			continue
		}
		out["diffusion-"+topology+".png"] = func(path string) error {
			var charts []*plot.Plot
			for _, mb := range r.Flags.SizesMB {
				p, err := diffusionChart(r, topology, mb)
				if err != nil {
					return err
				}
				if p != nil {
					charts = append(charts, p)
				}
			}
			return plots.Save(path, vg.Points(float64(360*max(len(charts), 1))), vg.Points(360), charts)
		}
	}
	if len(r.Scale) > 0 {
		out["diffusion-scale.png"] = func(path string) error {
			cdf, byHops, err := scaleCharts(r.Scale, r.Flags)
			if err != nil {
				return err
			}
			return plots.Save(path, vg.Points(900), vg.Points(380), []*plot.Plot{cdf, byHops})
		}
	}
	return out
}

// diffusionChart is one closure size's chart of a topology, or nil if the
// report has no such cell.
func diffusionChart(r *diffusionReport, topology string, mb int) (*plot.Plot, error) {
	title := fmt.Sprintf("%s of %d nodes, %d MB closure", topology, r.Flags.Nodes, mb)
	var p *plot.Plot
	if topology == "line" {
		p = plots.New(title, "hop from the forger", "closure held, s from publication")
	} else {
		p = plots.New(title, "s from publication", "fraction of the nodes holding the closure")
		p.Y.Max = 1
		p.Legend.Top, p.Legend.Left = false, false // a CDF leaves the lower right empty
	}
	style := 0
	for _, c := range r.Cells {
		if c.Topology != topology || c.ClosureMB != mb {
			continue
		}
		var measured, floor plotter.XYs
		if topology == "line" {
			for i := range c.ClosureMs {
				t, f := c.ClosureMs[i], c.FloorMs[i]
				if i == 0 {
					t = 0 // the forger: the hop times start at publication
				}
				measured = append(measured, plotter.XY{X: float64(i), Y: t / 1000})
				floor = append(floor, plotter.XY{X: float64(i), Y: f / 1000})
			}
		} else {
			measured, floor = plots.CDF(seconds(c.ClosureMs)), plots.CDF(seconds(c.FloorMs))
		}
		name := fmt.Sprintf("%d%% held", c.HeldPct)
		if err := plots.Line(p, name, measured, plots.Style{Color: style, Points: topology == "line", Steps: topology != "line"}); err != nil {
			return nil, err
		}
		if err := plots.Line(p, name+", floor", floor, plots.Style{Color: style, Dashed: true, Steps: topology != "line"}); err != nil {
			return nil, err
		}
		style++
	}
	if style == 0 {
		return nil, nil
	}
	return p, nil
}

// scaleCharts are the scale runs' CDFs over their nodes, and their
// closure times by hops from the forger, a color per run.
func scaleCharts(runs []*scaleReport, f diffusionFlags) (*plot.Plot, *plot.Plot, error) {
	s := f.Scale
	title := fmt.Sprintf("random graphs of degree %d, %s, %v: %d MB, %d%% held", s.Degree, s.Bandwidth, f.Latency, s.SizeMB, s.HeldPct)
	cdf := plots.New(title, "s from publication", "fraction of the nodes holding the closure")
	cdf.Y.Max = 1
	byHops := plots.New("closure time by distance from the forger", "hops from the forger", "closure held, s from publication")
	deadline, latest, farthest := runs[0].DeadlineMs/1000, 0.0, 0
	for i, r := range runs {
		c := r.Cell
		name := fmt.Sprintf("%d nodes", r.Nodes)
		if err := plots.Line(cdf, name, plots.CDF(seconds(c.ClosureMs)), plots.Style{Color: i, Steps: true}); err != nil {
			return nil, nil, err
		}
		if err := plots.Line(cdf, name+", floor", plots.CDF(seconds(c.FloorMs)), plots.Style{Color: i, Dashed: true, Steps: true}); err != nil {
			return nil, nil, err
		}
		var measured plotter.XYs
		floorAt := map[int]float64{}
		for n, h := range c.Hops {
			measured = append(measured, plotter.XY{X: float64(h), Y: c.ClosureMs[n] / 1000})
			floorAt[h] = c.FloorMs[n] / 1000
		}
		var floor plotter.XYs
		for h := range slices.Max(c.Hops) + 1 {
			floor = append(floor, plotter.XY{X: float64(h), Y: floorAt[h]})
		}
		points, err := plotter.NewScatter(measured)
		if err != nil {
			return nil, nil, err
		}
		points.Color = plots.Color(i)
		byHops.Add(points)
		byHops.Legend.Add(name, points)
		if err := plots.Line(byHops, name+", floor", floor, plots.Style{Color: i, Dashed: true}); err != nil {
			return nil, nil, err
		}
		latest, farthest = max(latest, slices.Max(c.ClosureMs)/1000), max(farthest, slices.Max(c.Hops))
	}
	if err := plots.VLine(cdf, "L_hdr + L_vote", deadline, 1); err != nil {
		return nil, nil, err
	}
	// Room on the right for the legend, past the deadline.
	cdf.X.Max = max(deadline, latest) * 1.4
	cdf.Legend.Left, cdf.Legend.Top = false, false
	if err := plots.HLine(byHops, "L_hdr + L_vote", deadline, float64(farthest)+0.5); err != nil {
		return nil, nil, err
	}
	byHops.X.Max = float64(farthest) + 0.5
	byHops.Y.Max = max(deadline, latest) * 1.3 // room for the legend
	byHops.Legend.Left = false
	return cdf, byHops, nil
}

func seconds(ms []float64) []float64 {
	out := make([]float64, len(ms))
	for i, v := range ms {
		out[i] = v / 1000
	}
	return out
}
