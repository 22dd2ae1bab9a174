package devnet

import (
	"context"
	"errors"
	"fmt"
	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/internal/devnet/layout"
	"github.com/leiosnode/leiosnode/internal/devnet/supervisor"
	"io"
	"math"
	"math/big"
	"net/http"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
)

// devnetChaos is the chaos scheduler's target on a running devnet: its
// node processes, its link proxies (nil without partitions) and its nodes'
// APIs.
type devnetChaos struct {
	d      *layout.Layout
	procs  *supervisor.Processes
	mesh   *linkMesh
	apis   []apiclient.Client
	client *http.Client
	forks  *forkWatch
	say    func(format string, args ...any)
}

func (c *devnetChaos) kill(i int) error   { return c.procs.Kill(i) }
func (c *devnetChaos) freeze(i int) error { return c.procs.Freeze(i) }
func (c *devnetChaos) thaw(i int) error   { return c.procs.Thaw(i) }

func (c *devnetChaos) restart(i int) error {
	p, err := c.procs.Restart(i)
	if err != nil {
		return err
	}
	c.forks.restarted(i, time.Now())
	c.say("%s (pid %d): %s", p.Name(), p.Pid(), p.CommandLine())
	return nil
}

func (c *devnetChaos) partition(side []int) error {
	if c.mesh == nil {
		return errors.New("the devnet's links do not go through its proxies")
	}
	c.mesh.partition(side)
	return nil
}

func (c *devnetChaos) heal() error {
	if c.mesh != nil {
		c.mesh.heal()
	}
	return nil
}

func (c *devnetChaos) poll(ctx context.Context) []apiclient.StatusPoll {
	return pollStatuses(ctx, c.client, c.d.Nodes)
}

func (c *devnetChaos) blockHash(ctx context.Context, node int, number uint64) (string, error) {
	blocks, err := c.apis[node].Blocks(ctx, number, 1)
	if err != nil || len(blocks) == 0 || blocks[0].Number != number {
		return "", err
	}
	return blocks[0].Hash, nil
}

// partitionNote says what a partition of this length is likely to do to
// the devnet's chain: the blocks each side forges meanwhile, beside k. A
// side can switch to the other side's chain only by rolling back the blocks
// it adopted since the cut, and no node rolls back more than k: a
// partition whose losing side forged more than k blocks does not heal.
func partitionNote(g *consensus.Genesis, nodes int, length time.Duration) string {
	small, large := expectedBlocks(g, 1, nodes, length), expectedBlocks(g, nodes-1, nodes, length)
	note := fmt.Sprintf("a %v partition of 1 node from %d: about %.1f blocks on its side and %.1f on the other meanwhile, k = %d",
		length, nodes-1, small, large, g.SecurityParam)
	if small+3*math.Sqrt(small) < float64(g.SecurityParam) {
		return note + ": it heals by itself"
	}
	return note + ": a side that forged more than k blocks cannot roll them back, so such a partition may never heal (the nodes stay on their own chains)"
}

// expectedBlocks is the blocks pools of share/of the (equal) stake are
// expected to forge in d: per slot, 1 - (1-f)^σ.
func expectedBlocks(g *consensus.Genesis, share, of int, d time.Duration) float64 {
	f := 0.1
	if r, err := g.ActiveSlots(); err == nil {
		f, _ = new(big.Rat).Set(r).Float64()
	}
	perSlot := 1 - math.Pow(1-f, float64(share)/float64(of))
	return perSlot * d.Seconds() / g.SlotLength().Seconds()
}

// syncWriter serializes the writes of the supervisor, the chaos scheduler
// and the node restarts to the devnet's output, a line each.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
