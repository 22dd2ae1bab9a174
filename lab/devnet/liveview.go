package devnet

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/devnet/report"
	"github.com/leiosnode/leiosnode/lab/devnet/ui"
)

// liveEBListTimeout bounds the live view's GET /api/ebs of a round, as a
// status poll is bounded, so that a round stays within its second.
const liveEBListTimeout = 800 * time.Millisecond

// startLiveView listens on addr and serves the devnet's live view there
// until stop is called, which waits for the server to end. It prints the
// page's address.
func startLiveView(addr string, d *layout.Layout, out io.Writer) (view *ui.View, stop func(), err error) {
	names := make([]string, len(d.Nodes))
	for i, n := range d.Nodes {
		names[i] = n.Name
	}
	if view, err = ui.New(names, d.Genesis); err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("live view: %w", err)
	}
	fmt.Fprintf(out, "live view: http://%s/\n", ln.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	var serving sync.WaitGroup
	serving.Go(func() {
		if err := ui.Serve(ctx, ln, view); err != nil {
			fmt.Fprintln(out, err)
		}
	})
	return view, func() { cancel(); serving.Wait() }, nil
}

// pollRound asks every node for its status and, when the live view is on,
// its EB list, all at once; the lists are nil without the view.
func pollRound(ctx context.Context, client *http.Client, nodes []layout.Node, view *ui.View) ([]apiclient.StatusPoll, []report.EBList) {
	if view == nil {
		return pollStatuses(ctx, client, nodes), nil
	}
	var lists []report.EBList
	var listing sync.WaitGroup
	listing.Go(func() { lists = pollEBLists(ctx, client, nodes, liveEBListTimeout) })
	polls := pollStatuses(ctx, client, nodes)
	listing.Wait()
	return polls, lists
}

// liveObservation is a round of polls as the live view takes it:
// exitStates[i] is "" while node i's process runs.
func liveObservation(at time.Time, polls []apiclient.StatusPoll, lists []report.EBList, exitStates []string, txs txLine) ui.Observation {
	o := ui.Observation{At: at, Nodes: make([]ui.NodeObservation, len(polls)), Txs: ui.Txs(txs)}
	for i, p := range polls {
		o.Nodes[i] = ui.NodeObservation{Status: p.Status, EBs: lists[i].EBs}
		if p.Status == nil {
			o.Nodes[i].Down = cmp.Or(exitStates[i], "down")
		}
	}
	return o
}
