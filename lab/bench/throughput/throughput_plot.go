package throughput

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/leiosnode/leiosnode/internal/plots"
)

// plotThroughput draws, against the offered rate (the firehose's, asked),
// the four figures a plateau is read off: the rate on chain (with the
// line where it equals the offered rate, and what the firehose managed to
// send), the share of EBs certified, the
// p95 submit-to-chain latency, and the rate the nodes refused; 2 × 2, to a
// PNG at path.
func plotThroughput(r *throughputReport, path string) error {
	const xLabel = "offered, tx/s (the firehose's rate)"
	machine := fmt.Sprintf("%d nodes, %d CPUs", r.Nodes, r.Machine.CPUs)
	if r.Hog {
		machine += ", one taken by a busy loop"
	}
	onChain := plots.New("txs on chain ("+machine+")", xLabel, "tx/s")
	certified := plots.New("EBs certified", xLabel, "% of the EBs the common chain announced")
	latency := plots.New("submit to on chain", xLabel, "p95 latency, s")
	refused := plots.New("refused by the nodes' edges", xLabel, "503 answers, per s")

	var sent, chain, share, p95, refusals plotter.XYs
	top := 0.0
	for _, c := range r.Cells {
		sent = append(sent, plotter.XY{X: c.Rate, Y: c.Offered})
		chain = append(chain, plotter.XY{X: c.Rate, Y: c.OnChain})
		share = append(share, plotter.XY{X: c.Rate, Y: 100 * c.CertifiedShare})
		p95 = append(p95, plotter.XY{X: c.Rate, Y: float64(c.LatencyP95Ms) / 1000})
		refusals = append(refusals, plotter.XY{X: c.Rate, Y: c.RefusedPerSecond})
		top = max(top, c.Rate, c.OnChain)
	}
	if err := plots.Line(onChain, "on chain = offered", plotter.XYs{{X: 0, Y: 0}, {X: top, Y: top}}, plots.Style{Color: 7, Dashed: true}); err != nil {
		return err
	}
	// What the firehose managed to send: below its rate when the nodes'
	// answers came too slowly for it.
	if err := plots.Line(onChain, "sent by the firehose", sent, plots.Style{Color: 1, Points: true}); err != nil {
		return err
	}
	for _, s := range []struct {
		p    *plot.Plot
		name string
		xys  plotter.XYs
	}{
		{onChain, "on chain", chain}, {certified, "certified", share}, {latency, "p95", p95}, {refused, "refused", refusals},
	} {
		if err := plots.Line(s.p, s.name, s.xys, plots.Style{Color: 0, Points: true}); err != nil {
			return err
		}
	}
	for _, p := range []*plot.Plot{onChain, certified, latency, refused} {
		p.X.Max = top * 1.05
	}
	onChain.Y.Max = top * 1.1
	certified.Y.Max = 100
	return plots.Save(path, vg.Points(960), vg.Points(720), []*plot.Plot{onChain, certified}, []*plot.Plot{latency, refused})
}
