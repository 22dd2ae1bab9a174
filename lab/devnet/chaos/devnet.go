package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/devnet/supervisor"
	"github.com/leiosnode/leiosnode/lab/devnet/wan"
)

// devnetChaos is the chaos scheduler's target on a running devnet: its
// node processes, its link proxies (nil without partitions) and its nodes'
// APIs.
type devnetChaos struct {
	d     *layout.Layout
	procs *supervisor.Processes
	mesh  *wan.Mesh
	apis  []apiclient.Client // by node index
	forks *ForkWatch
	say   func(format string, args ...any)
	// starving is the starve fault's duty cycle while it lasts, attacking
	// the attack under way; only the scheduler's goroutine touches them.
	starving  *starvation
	attacking *attacking
	// client reads the nodes' /metrics during an attack.
	client *http.Client
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
	c.mesh.Partition(side)
	return nil
}

func (c *devnetChaos) heal() error {
	if c.mesh != nil {
		c.mesh.Heal()
	}
	return nil
}

func (c *devnetChaos) poll(ctx context.Context) []apiclient.StatusPoll {
	return apiclient.PollStatuses(ctx, c.apis)
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

// New is the chaos scheduler of a running devnet, its links through mesh
// (nil without partitions), and the fork watch it and the supervisor feed.
// It prints what the spec's partitions are likely to do, and the seed.
func New(d *layout.Layout, procs *supervisor.Processes, mesh *wan.Mesh, client *http.Client, out io.Writer, spec Spec, seed uint64, started time.Time, duration time.Duration) (*Scheduler, *ForkWatch) {
	names, peers := make([]string, len(d.Nodes)), make([]string, len(d.Nodes))
	apis := make([]apiclient.Client, len(d.Nodes))
	for i, n := range d.Nodes {
		names[i], peers[i] = n.Name, n.PeerID.String()
		apis[i] = apiclient.New(client, "http://"+n.HTTPAddr)
	}
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	forks := newForkWatch(names)
	s := &Scheduler{
		spec:    spec,
		names:   names,
		peers:   peers,
		target:  &devnetChaos{d: d, procs: procs, mesh: mesh, apis: apis, forks: forks, say: say, client: client},
		start:   d.Genesis.SystemStart,
		seed:    seed,
		observe: forks.Observe,
		say:     say,
	}
	if duration > 0 {
		s.end = started.Add(duration)
	}
	say("chaos: %s, seed %d (--chaos-seed %d repeats its choices)", spec, seed, seed)
	for _, f := range spec.Faults {
		if f.Kind == Partition {
			say("chaos: %s", partitionNote(d.Genesis, len(d.Nodes), f.Length))
		}
	}
	return s, forks
}
