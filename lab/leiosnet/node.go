package leiosnet

import (
	"context"
	"fmt"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/network"
)

// Node is one Leios node of a Network: its pipeline, built with leios.Open
// as node.Node builds it, served by its host.
type Node struct {
	Index    int
	Pipeline *leios.Pipeline
	Host     *network.Host
}

// Publish puts eb through the node's pipeline as its forge would.
func (nd *Node) Publish(eb *EB) error {
	if err := nd.Pipeline.Publish(eb.Header, eb.Body, eb.Closure); err != nil {
		return fmt.Errorf("leiosnet: node %d: %w", nd.Index, err)
	}
	return nil
}

// AwaitClosure waits until the node holds the whole closure of p and
// returns when it first did.
func (nd *Node) AwaitClosure(ctx context.Context, p block.Point) (time.Time, error) {
	at, err := nd.Pipeline.AwaitClosure(ctx, p)
	if err != nil {
		return at, fmt.Errorf("leiosnet: node %d never held the closure of %s: %w", nd.Index, p, err)
	}
	return at, nil
}

// FetchedBytes is the body and tx bytes the node received from peers and
// ingested, since it started.
func (nd *Node) FetchedBytes() uint64 { return nd.Pipeline.Stats().FetchedBytes }
