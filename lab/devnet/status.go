package devnet

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/devnet/report"
)

// pollStatuses asks every node for GET /status at once.
func pollStatuses(ctx context.Context, client *http.Client, nodes []layout.Node) []apiclient.StatusPoll {
	return apiclient.PollStatuses(ctx, newNodeAPIs(client, nodes))
}

// fetchStatus is one GET http://addr/status.
func fetchStatus(ctx context.Context, client *http.Client, addr string) (*apitypes.Status, error) {
	return apiclient.New(client, "http://"+addr).Status(ctx)
}

// ebListTimeout bounds the report's GET /api/ebs: a list of thousands of
// EBs takes longer than a status to serve and decode, and the report asks
// once a run.
const ebListTimeout = 5 * time.Second

// pollEBLists asks every node for GET /api/ebs at once, each within
// timeout.
func pollEBLists(ctx context.Context, client *http.Client, nodes []layout.Node, timeout time.Duration) []report.EBList {
	polls := make([]report.EBList, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			var ebs []apitypes.EBTimes
			err := apiclient.New(client, "http://"+n.HTTPAddr).Fetch(ctx, "/api/ebs", timeout, &ebs)
			polls[i] = report.EBList{EBs: ebs, Err: err}
		})
	}
	wg.Wait()
	return polls
}

// txLine is the status line's figures of the whole devnet's txs.
type txLine struct {
	Submitted uint64  // by the firehose
	OnChain   uint64  // the most txs on chain any node reports
	PerSecond float64 // reaching the chain, over the last onChainRateWindow
}

// statusLine is the devnet's once-a-second line: the slot, then per node its
// tip (block number and hash prefix), immutable tip, peer count, mempool
// size in txs, EBs announced / bodies held / closures complete and the
// CertRBs it applied, or why it is not answering, then the txs.
// exitStates[i] is "" while node i's process runs.
func statusLine(clock consensus.Clock, now time.Time, names []string, polls []apiclient.StatusPoll, exitStates []string, txs txLine) string {
	var b strings.Builder
	if now.Before(clock.Start) {
		fmt.Fprintf(&b, "starts in %4.1fs", clock.Start.Sub(now).Seconds())
	} else {
		fmt.Fprintf(&b, "slot %6d", clock.SlotAt(now))
	}
	for i, name := range names {
		fmt.Fprintf(&b, " | %s ", name)
		switch st := polls[i].Status; {
		case st != nil:
			fmt.Fprintf(&b, "#%d %s imm #%d peers %d mempool %d EBs %d/%d/%d cert %d",
				st.Tip.BlockNumber, apiclient.ShortHash(st.Tip.Hash), st.ImmutableTip.BlockNumber, len(st.Peers), st.Mempool.Txs,
				st.Leios.EBsAnnounced, st.Leios.BodiesHeld, st.Leios.ClosuresComplete, st.Leios.EBsCertified)
		case exitStates[i] != "":
			b.WriteString("down (" + exitStates[i] + ")")
		default:
			b.WriteString("down")
		}
	}
	fmt.Fprintf(&b, " | txs %d sent %d on chain %.1f/s", txs.Submitted, txs.OnChain, txs.PerSecond)
	return b.String()
}

// onChainRateWindow is the span over which the status line measures the
// txs per second reaching the chain: five mean RB intervals, at least
// 10 s (10 s at the devnet's timing, 100 s at the CIP's), so the rate is
// not a blur of single blocks.
func onChainRateWindow(g *consensus.Genesis) time.Duration {
	return max(10*time.Second, 5*g.Timing().MeanRBInterval())
}

// maxTxsOnChain is the most txs on chain any node that answered reports.
func maxTxsOnChain(polls []apiclient.StatusPoll) uint64 {
	var most uint64
	for _, p := range polls {
		if p.Status != nil {
			most = max(most, p.Status.TxsOnChain)
		}
	}
	return most
}

// onChainRate measures the txs per second reaching the chain: the growth of
// the devnet's txs on chain over the last window. It is used by the
// supervisor's loop alone.
type onChainRate struct {
	window time.Duration
	// samples are oldest first; the first is the newest one at least a
	// window old, once there is one.
	samples []txSample
}

type txSample struct {
	at      time.Time
	onChain uint64
}

func newOnChainRate(window time.Duration) *onChainRate { return &onChainRate{window: window} }

// observe records the txs on chain at a time, later than the last one's.
func (r *onChainRate) observe(at time.Time, onChain uint64) {
	r.samples = append(r.samples, txSample{at, onChain})
	for len(r.samples) > 2 && at.Sub(r.samples[1].at) >= r.window {
		r.samples = r.samples[1:]
	}
}

// perSecond is the rate between the first and the last sample; 0 before
// there are two, or when the count went down (a node rolled back or
// restarted empty).
func (r *onChainRate) perSecond() float64 {
	if len(r.samples) < 2 {
		return 0
	}
	first, last := r.samples[0], r.samples[len(r.samples)-1]
	span := last.at.Sub(first.at).Seconds()
	if span <= 0 || last.onChain < first.onChain {
		return 0
	}
	return float64(last.onChain-first.onChain) / span
}

// newNodeAPIs are the clients of the nodes' APIs, in node order.
func newNodeAPIs(client *http.Client, nodes []layout.Node) []apiclient.Client {
	apis := make([]apiclient.Client, len(nodes))
	for i, n := range nodes {
		apis[i] = apiclient.New(client, "http://"+n.HTTPAddr)
	}
	return apis
}
