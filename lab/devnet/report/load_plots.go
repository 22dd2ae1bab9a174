package report

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/internal/plots"
)

// loadPlotsFile is the load figure written beside the report file:
// r.json gives r.load.png.
func loadPlotsFile(reportFile string) string {
	return strings.TrimSuffix(reportFile, filepath.Ext(reportFile)) + ".load.png"
}

// writeLoadPlots draws the timeline into one PNG, every panel against the
// seconds from the system start, the warm-up's end marked where there was
// a measured span: the tx rates; the EB stages' p50 (solid) and p95
// (dashed) after the slot start, with the voting deadline; the nodes'
// cores by work, stacked; the EBs announced and certified per window;
// the EBs' size with the fullest mempool; and the share of voters that
// missed their voting window.
func writeLoadPlots(path string, t *Timeline, targets *Targets) error {
	xLabel := fmt.Sprintf("s from the system start (windows of %v)", seconds(t.WindowSeconds))
	rates := plots.New("txs", xLabel, "tx/s")
	stages := plots.New("EB stages (p50 solid, p95 dashed)", xLabel, "ms after the EB's slot start")
	cores := plots.New("the nodes' CPU, summed", xLabel, "cores")
	ebs := plots.New("EBs, by their slot", xLabel, "EBs per window")
	sizes := plots.New("EB size and mempool", xLabel, "txs")
	missed := plots.New("voting windows missed", xLabel, "% of (EB, voting node) pairs")
	missed.Y.Max = 100

	polled := func(value func(TimelineWindow) float64) plotter.XYs {
		return windowSteps(t.Windows, func(w TimelineWindow) (float64, bool) { return value(w), w.Polls > 0 })
	}
	for i, series := range []struct {
		name  string
		value func(TimelineWindow) float64
	}{
		{"offered", func(w TimelineWindow) float64 { return w.OfferedPerSecond }},
		{"admitted (dashed)", func(w TimelineWindow) float64 { return w.AdmittedPerSecond }},
		{"refused (503)", func(w TimelineWindow) float64 { return w.RefusedPerSecond }},
	} {
		// Admitted is dashed: where the edge refuses nothing it lies on
		// offered, which shows through.
		if err := plots.Line(rates, series.name, polled(series.value), plots.Style{Color: i, Dashed: i == 1}); err != nil {
			return err
		}
	}
	onChain := windowSteps(t.Windows, func(w TimelineWindow) (float64, bool) { return w.OnChainPerSecond, true })
	if err := plots.Line(rates, "on chain", onChain, plots.Style{Color: 3}); err != nil {
		return err
	}

	top := float64(t.DeadlineMs)
	for i, stage := range apitypes.Stages() {
		for _, dashed := range []bool{false, true} {
			xys := windowPoints(t.Windows, func(w TimelineWindow) (float64, bool) {
				p := *w.Stages.At(stage)
				if p == nil {
					return 0, false
				}
				if dashed {
					return float64(p.P95Ms), true
				}
				return float64(p.P50Ms), true
			})
			legend := string(stage)
			if dashed {
				legend = ""
			}
			if err := plots.Line(stages, legend, xys, plots.Style{Color: i, Dashed: dashed, Points: !dashed}); err != nil {
				return err
			}
			for _, p := range xys {
				top = max(top, p.Y)
			}
		}
	}
	if t.DeadlineMs > 0 {
		if err := plots.HLine(stages, "voting deadline", float64(t.DeadlineMs), timelineEnd(t)); err != nil {
			return err
		}
	}
	stages.Y.Max = top * 1.35 // room for the legend

	if err := stackCores(cores, t); err != nil {
		return err
	}

	announced := windowSteps(t.Windows, func(w TimelineWindow) (float64, bool) { return float64(w.EBs), true })
	certified := windowSteps(t.Windows, func(w TimelineWindow) (float64, bool) { return float64(w.EBsCertified), true })
	if err := plots.Line(ebs, "announced", announced, plots.Style{Color: 0}); err != nil {
		return err
	}
	if err := plots.Line(ebs, "certified", certified, plots.Style{Color: 2}); err != nil {
		return err
	}
	ebs.Y.Max = maxY(announced) * 1.3

	meanTxs := windowPoints(t.Windows, func(w TimelineWindow) (float64, bool) { return w.MeanEBTxs, w.MeanEBTxs > 0 })
	mempool := polled(func(w TimelineWindow) float64 { return float64(w.MempoolTxs) })
	if err := plots.Line(sizes, "EB size, mean", meanTxs, plots.Style{Color: 0, Points: true}); err != nil {
		return err
	}
	if err := plots.Line(sizes, "fullest mempool", mempool, plots.Style{Color: 1}); err != nil {
		return err
	}
	sizes.Y.Max = max(maxY(meanTxs), maxY(mempool)) * 1.3

	share := windowPoints(t.Windows, func(w TimelineWindow) (float64, bool) { return 100 * w.MissedShare, w.VotingPairs > 0 })
	if err := plots.Line(missed, "closure incomplete in the voting window", share, plots.Style{Color: 3, Points: true}); err != nil {
		return err
	}
	missed.Y.Max = 130

	rates.Y.Max = maxY(slices.Concat(onChain, polled(func(w TimelineWindow) float64 { return w.OfferedPerSecond }))) * 1.35
	all := []*plot.Plot{rates, stages, cores, ebs, sizes, missed}
	for _, p := range all {
		p.X.Max = timelineEnd(t)
	}
	if targets != nil {
		for _, p := range []*plot.Plot{rates, cores, ebs, sizes} {
			if err := plots.VLine(p, "", targets.FromS, p.Y.Max); err != nil {
				return err
			}
		}
		rates.Title.Text = "txs (the dotted line ends the warm-up)"
	}
	return plots.Save(path, vg.Points(1400), vg.Points(800), all[:3], all[3:])
}

// stackedWorks is how many works the CPU panel draws apart, the largest;
// the others are stacked as one, so that no two share a color.
const stackedWorks = 7

// stackCores draws the cores by work, stacked, the largest work at the
// bottom and the legend in the stack's order, with the process's cores as
// a line over them; or the process's cores alone when the nodes did not
// measure their CPU by work.
func stackCores(p *plot.Plot, t *Timeline) error {
	total := windowSteps(t.Windows, func(w TimelineWindow) (float64, bool) { return w.Cores, w.Polls > 0 })
	spent := map[string]float64{}
	for _, w := range t.Windows {
		for work, c := range w.CoresByWork {
			spent[work] += c
		}
	}
	works := slices.SortedFunc(maps.Keys(spent), func(a, b string) int {
		return cmp.Or(cmp.Compare(spent[b], spent[a]), cmp.Compare(a, b))
	})
	p.Y.Max = maxY(total) * 1.6 // room for the legend
	if len(works) == 0 {
		p.Title.Text = "the nodes' CPU, summed (by work: not measured)"
		return plots.Line(p, "all work", total, plots.Style{Color: 0})
	}
	type layer struct {
		name         string
		color        int
		lower, upper plotter.XYs
		cores        func(TimelineWindow) float64
	}
	var layers []layer
	for i, work := range works[:min(stackedWorks, len(works))] {
		layers = append(layers, layer{name: work, color: i, cores: func(w TimelineWindow) float64 { return w.CoresByWork[work] }})
	}
	if rest := works[min(stackedWorks, len(works)):]; len(rest) > 0 {
		layers = append(layers, layer{name: "the other " + fmt.Sprint(len(rest)), color: 8, cores: func(w TimelineWindow) float64 {
			var sum float64
			for _, work := range rest {
				sum += w.CoresByWork[work]
			}
			return sum
		}})
	}
	lower := windowSteps(t.Windows, func(w TimelineWindow) (float64, bool) { return 0, w.Polls > 0 })
	for i := range layers {
		cores := windowSteps(t.Windows, func(w TimelineWindow) (float64, bool) { return layers[i].cores(w), w.Polls > 0 })
		upper := make(plotter.XYs, len(lower))
		for j := range lower {
			upper[j] = plotter.XY{X: lower[j].X, Y: lower[j].Y + cores[j].Y}
		}
		layers[i].lower, layers[i].upper = lower, upper
		lower = upper
	}
	if err := plots.Line(p, "process (all work)", total, plots.Style{Color: 7, Dashed: true}); err != nil {
		return err
	}
	// The top layer first: the legend then reads as the stack does.
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		if err := plots.Band(p, l.name, l.lower, l.upper, plots.Style{Color: l.color}); err != nil {
			return err
		}
	}
	return nil
}

// windowSteps is a value per window, flat across each window (a point at
// its start and one at its end), for the windows where ok.
func windowSteps(ws []TimelineWindow, value func(TimelineWindow) (float64, bool)) plotter.XYs {
	var xys plotter.XYs
	for _, w := range ws {
		if v, ok := value(w); ok {
			xys = append(xys, plotter.XY{X: w.FromS, Y: v}, plotter.XY{X: w.ToS, Y: v})
		}
	}
	return xys
}

// windowPoints is a value per window at its middle, for the windows where
// ok.
func windowPoints(ws []TimelineWindow, value func(TimelineWindow) (float64, bool)) plotter.XYs {
	var xys plotter.XYs
	for _, w := range ws {
		if v, ok := value(w); ok {
			xys = append(xys, plotter.XY{X: (w.FromS + w.ToS) / 2, Y: v})
		}
	}
	return xys
}

func timelineEnd(t *Timeline) float64 {
	if len(t.Windows) == 0 {
		return 1
	}
	return t.Windows[len(t.Windows)-1].ToS
}

// maxY is the largest Y, at least 1 (an axis of a flat zero still shows).
func maxY(xys plotter.XYs) float64 {
	top := 1.0
	for _, p := range xys {
		top = max(top, p.Y)
	}
	return top
}
