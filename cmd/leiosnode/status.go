package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/node"
)

// pollTimeout bounds one GET /status, so a hung node cannot stall the
// once-a-second status line.
const pollTimeout = 800 * time.Millisecond

// nodePoll is one node's answer to one status poll.
type nodePoll struct {
	Status *node.Status // nil when the node did not answer
	Err    error
}

// pollStatuses asks every node for GET /status at once.
func pollStatuses(ctx context.Context, client *http.Client, nodes []devnetNode) []nodePoll {
	polls := make([]nodePoll, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			st, err := fetchStatus(ctx, client, n.HTTPAddr)
			polls[i] = nodePoll{Status: st, Err: err}
		})
	}
	wg.Wait()
	return polls
}

// fetchStatus is one GET http://addr/status.
func fetchStatus(ctx context.Context, client *http.Client, addr string) (*node.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/status", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /status: %s", resp.Status)
	}
	var st node.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("GET /status: %w", err)
	}
	return &st, nil
}

// statusLine is the devnet's once-a-second line: the slot, then per node its
// tip (block number and hash prefix), immutable tip and peer count, or why
// it is not answering. exitStates[i] is "" while node i's process runs.
func statusLine(clock consensus.Clock, now time.Time, names []string, polls []nodePoll, exitStates []string) string {
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
			fmt.Fprintf(&b, "#%d %s imm #%d peers %d", st.Tip.BlockNumber, hashPrefix(st.Tip.Hash), st.ImmutableTip.BlockNumber, len(st.Peers))
		case exitStates[i] != "":
			b.WriteString("down (" + exitStates[i] + ")")
		default:
			b.WriteString("down")
		}
	}
	return b.String()
}

// hashPrefix is the first 8 hex digits of a hash, or "-" for no hash (the
// tip of an empty chain).
func hashPrefix(h string) string {
	switch {
	case h == "":
		return "-"
	case len(h) > 8:
		return h[:8]
	}
	return h
}
