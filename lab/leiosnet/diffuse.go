package leiosnet

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/block"
)

// Diffusion is what one EB's diffusion measured.
type Diffusion struct {
	Point block.Point
	// Published is when the forging node started publishing the EB.
	Published time.Time
	// Closure is, per node, the time from Published until the node held
	// the whole closure (the forger's own is when it had stored it).
	Closure []time.Duration
	// Fetched is, per node, the body and tx bytes it fetched from peers
	// during the diffusion (fetch.Stats.FetchedBytes before and after).
	// It is this EB's only while no other EB is in flight.
	Fetched []uint64
}

// Last is the time until the last node held the closure.
func (d *Diffusion) Last() time.Duration { return slices.Max(d.Closure) }

// Diffuse publishes eb on node from and waits until every node holds its
// whole closure (or ctx ends). Every time is taken from the moment the
// forger starts publishing, before it stores anything: the forger's own
// storing is part of what the first hop costs.
func (n *Network) Diffuse(ctx context.Context, from int, eb *EB) (*Diffusion, error) {
	d := &Diffusion{Point: eb.Point(), Closure: make([]time.Duration, len(n.nodes)), Fetched: make([]uint64, len(n.nodes))}
	before := make([]uint64, len(n.nodes))
	for i, nd := range n.nodes {
		before[i] = nd.FetchedBytes()
	}
	d.Published = time.Now()
	if err := n.nodes[from].Publish(eb); err != nil {
		return nil, err
	}
	if err := n.AwaitClosure(ctx, d.Point); err != nil {
		return nil, err
	}
	if err := n.awaitIdle(ctx); err != nil {
		return nil, err
	}
	for i, nd := range n.nodes {
		at, err := nd.AwaitClosure(ctx, d.Point)
		if err != nil {
			return nil, err
		}
		d.Closure[i] = at.Sub(d.Published)
		d.Fetched[i] = nd.FetchedBytes() - before[i]
	}
	return d, nil
}

// AwaitClosure waits until every node holds the whole closure of p.
func (n *Network) AwaitClosure(ctx context.Context, p block.Point) error {
	for _, nd := range n.nodes {
		if _, err := nd.AwaitClosure(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// awaitIdle waits until no node has a fetch request in flight. A closure
// completes when its last txs are stored, just before the fetch logic
// ends their request; the fetch logic has no event for that, so this polls
// its Stats briefly.
func (n *Network) awaitIdle(ctx context.Context) error {
	for {
		busy := 0
		for _, nd := range n.nodes {
			busy += nd.Pipeline.Stats().RequestsInFlight
		}
		if busy == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("leiosnet: %d fetch requests still in flight: %w", busy, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Preseed makes every node hold txs already, as they would after an earlier
// EB: it forges an EB of txs (in reverse order, so that it never has the
// hash of an EB forged from the same txs in order) and publishes it on
// every node through the same handlers as a forger. Its announcement is
// relayed, so a node may fetch some of it from a peer that published it
// first, as in reality. It returns once every node holds that EB's closure
// and no fetch is in flight, so none counts against the next Diffuse.
func (n *Network) Preseed(ctx context.Context, txs [][]byte) (*EB, error) {
	reversed := slices.Clone(txs)
	slices.Reverse(reversed)
	eb, err := n.Forge(reversed)
	if err != nil {
		return nil, err
	}
	for _, nd := range n.nodes {
		if err := nd.Publish(eb); err != nil {
			return nil, err
		}
	}
	if err := n.AwaitClosure(ctx, eb.Point()); err != nil {
		return nil, err
	}
	return eb, n.awaitIdle(ctx)
}
