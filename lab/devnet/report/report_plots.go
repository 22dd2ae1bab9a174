package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/plots"
)

// reportPlotsFile is the PNG written beside the report file: r.json gives
// r.png.
func reportPlotsFile(reportFile string) string {
	return strings.TrimSuffix(reportFile, filepath.Ext(reportFile)) + ".png"
}

// writeReportPlots draws, into one PNG, every node's tip over time, the
// CDF of the EBs' closure latency per node (from their slot start, with
// the voting deadline), txs on chain per second over time (with the rate
// offered, when the firehose ran), and every node's mempool over time.
func writeReportPlots(path string, s *StatusSeries, g *consensus.Genesis, leios *LeiosReport, offered float64) error {
	tips := plots.New("every node's tip", "s from the devnet's start", "block number")
	ebs := plots.New("EB closure latency", "ms from the EB's slot start to the node's complete closure", "fraction of the EBs")
	ebs.Y.Max = 1
	// The rate is taken over a few blocks with their EBs' txs, and several
	// status polls.
	rateSpan := rbWindow(onChainRateRBs, g.Timing().MeanRBInterval(), minOnChainRateSpan)
	rate := plots.New("txs reaching the chain", "s from the devnet's start", fmt.Sprintf("tx/s on chain (over %v)", rateSpan))
	pools := plots.New("mempools", "s from the devnet's start", "txs in the mempool")
	latest, fullest := 0.0, 0.0 // the longest closure latency, the fullest mempool
	for i, name := range s.names {
		var tip, pool plotter.XYs
		for _, sample := range s.samples {
			if n := sample.nodes[i]; n != nil {
				tip = append(tip, plotter.XY{X: sample.seconds, Y: float64(n.tip)})
				pool = append(pool, plotter.XY{X: sample.seconds, Y: float64(n.mempoolTxs)})
				fullest = max(fullest, float64(n.mempoolTxs))
			}
		}
		style := plots.Style{Color: i, Steps: true}
		if err := plots.Line(tips, name, tip, style); err != nil {
			return err
		}
		if err := plots.Line(pools, name, pool, style); err != nil {
			return err
		}
		if leios != nil {
			var closures []float64
			for _, eb := range leios.EBs {
				if ms, ok := eb.ClosureMs[name]; ok {
					closures = append(closures, float64(ms))
					latest = max(latest, float64(ms))
				}
			}
			if len(closures) > 0 {
				if err := plots.Line(ebs, name, plots.CDF(closures), style); err != nil {
					return err
				}
			}
		}
	}
	lp := g.Leios
	deadline := float64(uint64(lp.LHdr+lp.LVote) * uint64(g.SlotLengthMs))
	if err := plots.VLine(ebs, "L_hdr + L_vote", deadline, 1); err != nil {
		return err
	}
	ebs.Legend.Top, ebs.Legend.Left = false, false // a CDF leaves the lower right empty
	ebs.X.Max = max(deadline, latest) * 1.4        // room for the legend past the deadline
	pools.Y.Max = fullest * 1.3                    // room for the legend
	onChain := s.onChainRate(rateSpan)
	if err := plots.Line(rate, "on chain", onChain, plots.Style{Color: 0}); err != nil {
		return err
	}
	if offered > 0 && len(onChain) > 0 {
		if err := plots.HLine(rate, "offered", offered, onChain[len(onChain)-1].X); err != nil {
			return err
		}
	}
	return plots.Save(path, vg.Points(960), vg.Points(720), []*plot.Plot{tips, ebs}, []*plot.Plot{rate, pools})
}

// onChainRate is, at each poll, the txs per second that reached the
// chain over the last span, by the most txs on any node's chain.
func (s *StatusSeries) onChainRate(span time.Duration) plotter.XYs {
	type point struct {
		seconds float64
		txs     uint64
	}
	var onChain []point
	for _, sample := range s.samples {
		most, any := uint64(0), false
		for _, n := range sample.nodes {
			if n != nil {
				most, any = max(most, n.txsOnChain), true
			}
		}
		if any {
			onChain = append(onChain, point{sample.seconds, most})
		}
	}
	var xys plotter.XYs
	for i, p := range onChain {
		// The earliest poll within the span before this one.
		j := slices.IndexFunc(onChain[:i+1], func(q point) bool { return p.seconds-q.seconds <= span.Seconds() })
		if first := onChain[j]; p.seconds > first.seconds && p.txs >= first.txs {
			xys = append(xys, plotter.XY{X: p.seconds, Y: float64(p.txs-first.txs) / (p.seconds - first.seconds)})
		}
	}
	return xys
}
