package report

import (
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/leiosnode/leiosnode/internal/plots"
)

// chancePlotFile is the chance figure written beside the report file:
// r.json gives r.chance.png.
func chancePlotFile(reportFile string) string {
	return strings.TrimSuffix(reportFile, filepath.Ext(reportFile)) + ".chance.png"
}

// writeChancePlot draws what the leader schedule alone gives a run as
// long as c's (capacity.Chance) as three distributions over the random
// chains, each with the run's own figure and the model's beside it: the
// ideal network's p95 latency, the share of RBs whose next RB came late
// enough to certify their EB, and what the chain's own RBs could carry.
// It draws nothing when c has no chance.
func writeChancePlot(path string, c *CapacityReport) (bool, error) {
	if c == nil || c.Chain == nil || c.Chain.Chance == nil || c.Chain.Latency == nil {
		return false, nil
	}
	chain, chance, m := c.Chain, c.Chain.Chance, c.Model
	xLabel := "s from submission to the chain"
	latency := plots.New("p95 latency: an ideal network on random chains as long as the run's", xLabel, "share of the chains at or under")
	p95s := chance.P95s()
	for i := range p95s {
		p95s[i] /= 1000
	}
	if err := plots.Line(latency, "random chains, the run's txs", plots.CDF(p95s), plots.Style{Color: 0, Steps: true}); err != nil {
		return false, err
	}
	for i, x := range []struct {
		name string
		ms   int64
	}{{"the model's p95", m.Latency.P95Ms}, {"the ideal's on the run's chain", idealP95(c)}, {"measured", chain.Latency.P95Ms}} {
		if x.ms <= 0 {
			continue
		}
		if err := plots.Line(latency, x.name, vertical(float64(x.ms)/1000), plots.Style{Color: i + 1, Dashed: i == 0}); err != nil {
			return false, err
		}
	}
	certified := plots.New("RBs whose next came late enough to certify, on the same chains", "% of the span's RBs", "share of the chains at or under")
	shares := chance.Shares()
	for i := range shares {
		shares[i] *= 100
	}
	if err := plots.Line(certified, "random chains", plots.CDF(shares), plots.Style{Color: 0, Steps: true}); err != nil {
		return false, err
	}
	if err := plots.Line(certified, "p_cert", vertical(100*m.PCert), plots.Style{Color: 1, Dashed: true}); err != nil {
		return false, err
	}
	if err := plots.Line(certified, "measured: certified", vertical(100*chain.CertifiedShare), plots.Style{Color: 3}); err != nil {
		return false, err
	}
	ceiling := plots.New("what each chain's own RBs could carry, on the same chains", "tx/s", "share of the chains at or under")
	if err := plots.Line(ceiling, "random chains", plots.CDF(chance.Ceilings()), plots.Style{Color: 0, Steps: true}); err != nil {
		return false, err
	}
	for i, x := range []struct {
		name        string
		txPerSecond float64
	}{{"the capacity", m.TxPerSecond}, {"90 % of it", 0.9 * m.TxPerSecond}, {"the run's chain", chain.ChainCeilingTxPerSecond}, {"measured: on chain", chain.OnChainTxPerSecond}} {
		if err := plots.Line(ceiling, x.name, vertical(x.txPerSecond), plots.Style{Color: i + 1, Dashed: i < 2}); err != nil {
			return false, err
		}
	}
	return true, plots.Save(path, 21*vg.Inch, 5*vg.Inch, []*plot.Plot{latency, certified, ceiling})
}

// idealP95 is the p95 of the ideal network on the run's own chain, or 0.
func idealP95(c *CapacityReport) int64 {
	if i := c.Chain.Ideal; i != nil {
		return i.P95Ms
	}
	return 0
}

// vertical is a line at x across a distribution's heights, 0 to 1.
func vertical(x float64) plotter.XYs { return plotter.XYs{{X: x, Y: 0}, {X: x, Y: 1}} }
