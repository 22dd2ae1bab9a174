package apiclient

import (
	"context"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
)

// pollTimeout bounds one GET /status of a poll, so a hung node cannot stall
// a once-a-second round of polls.
const pollTimeout = 800 * time.Millisecond

// StatusPoll is one node's answer to one status poll.
type StatusPoll struct {
	Status *apitypes.Status // nil when the node did not answer
	Err    error
}

// Status is GET /status, within a poll's timeout.
func (a Client) Status(ctx context.Context) (*apitypes.Status, error) {
	var st apitypes.Status
	if err := a.Fetch(ctx, "/status", pollTimeout, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// PollStatuses asks every node for GET /status at once; the answers are in
// the order of nodes.
func PollStatuses(ctx context.Context, nodes []Client) []StatusPoll {
	polls := make([]StatusPoll, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			st, err := n.Status(ctx)
			polls[i] = StatusPoll{Status: st, Err: err}
		})
	}
	wg.Wait()
	return polls
}

// ShortHash is the first 8 hex digits of a hash the API answered, for a
// person, or "-" for no hash (the tip of an empty chain).
func ShortHash(h string) string {
	switch {
	case h == "":
		return "-"
	case len(h) > 8:
		return h[:8]
	}
	return h
}
