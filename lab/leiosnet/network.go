package leiosnet

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	"github.com/multiformats/go-multiaddr"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/consensustest"
	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/txcache"
)

// Network is a running network of Leios nodes on mocknet links. Build it
// with Start; Close stops it.
type Network struct {
	opts      Options
	nodes     []*Node
	edges     [][2]int
	mock      mocknet.Mocknet
	stop      chan struct{} // closed by Close: ends the wires' deliveries
	closeOnce sync.Once
	pool      consensustest.Pool // the one pool: it leads every slot (f = 1)
	validator *consensus.Validator
	limits    block.EBLimits
	tempDir   string // removed by Close; "" if Options.Dir was given

	mu   sync.Mutex // guards slot
	slot uint64     // the last forged slot

	cancel context.CancelFunc
	group  *errgroup.Group
}

// Start builds the nodes and their links, runs them, and returns once every
// node is connected to its neighbours and a first, one-tx EB from node 0
// has reached every node (so every protocol session is up). The network
// runs until Close (or ctx ends; Close is still needed).
func Start(ctx context.Context, opts Options) (_ *Network, err error) {
	if opts, err = opts.withDefaults(); err != nil {
		return nil, err
	}
	n := &Network{opts: opts, mock: mocknet.New(), stop: make(chan struct{})}
	defer func() {
		if err != nil {
			_ = n.Close()
		}
	}()
	// One pool with all the stake, slots of one second starting a day
	// ago: every forged slot has begun, so no header is from the future.
	n.pool = consensustest.NewPool("leiosnet", 0x1e)
	g := consensustest.Genesis(n.pool)
	g.SystemStart = time.Now().Add(-24 * time.Hour).Truncate(time.Second)
	if n.validator, err = consensus.NewValidator(g, nil); err != nil {
		return nil, err
	}
	n.limits = g.Leios.EBLimits()
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "leiosnet-"); err != nil {
			return nil, err
		}
		n.tempDir = dir
	}
	n.edges = buildEdges(opts)

	var hosts []*network.Host
	for i := range opts.Nodes {
		nd, err := n.newNode(i, filepath.Join(dir, fmt.Sprintf("node%02d", i)))
		if nd != nil {
			n.nodes = append(n.nodes, nd) // even partly built: Close releases it
		}
		if err != nil {
			return nil, err
		}
		hosts = append(hosts, nd.Host)
	}
	// Mocknet links without latency or limit: the wires time the bytes
	// (shaper.go).
	for _, e := range n.edges {
		if _, err := n.mock.LinkPeers(hosts[e[0]].ID(), hosts[e[1]].ID()); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.group, runCtx = errgroup.WithContext(runCtx)
	for _, nd := range n.nodes {
		n.run(runCtx, nd)
	}
	if err := n.awaitConnected(ctx); err != nil {
		return nil, err
	}
	warmUp, err := n.Forge(GenerateTxs(rand.New(rand.NewPCG(opts.Seed, 0)), TxSize))
	if err != nil {
		return nil, err
	}
	if _, err := n.Diffuse(ctx, 0, warmUp); err != nil {
		return nil, fmt.Errorf("leiosnet: warm-up EB: %w", err)
	}
	return n, nil
}

// buildEdges lays out the links, each as (lower, higher) node index.
func buildEdges(opts Options) [][2]int {
	var edges [][2]int
	if opts.Topology == Line {
		for i := 1; i < opts.Nodes; i++ {
			edges = append(edges, [2]int{i - 1, i})
		}
		return edges
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 1))
	has := make(map[[2]int]bool)
	add := func(a, b int) {
		e := [2]int{min(a, b), max(a, b)}
		if a != b && !has[e] {
			has[e] = true
			edges = append(edges, e)
		}
	}
	for i := 1; i < opts.Nodes; i++ {
		add(rng.IntN(i), i)
	}
	// Bounded: a small graph may not have ExtraEdges free pairs.
	for want, tries := len(edges)+opts.ExtraEdges, 0; len(edges) < want && tries < 100*want; tries++ {
		add(rng.IntN(opts.Nodes), rng.IntN(opts.Nodes))
	}
	slices.SortFunc(edges, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return edges
}

// newNode builds node i as node.Node builds its Leios part, on a mocknet
// peer, with its LeiosDB in dir. On an error it returns what it built,
// for Close to release.
func (n *Network) newNode(i int, dir string) (*Node, error) {
	seed := make([]byte, ed25519.SeedSize)
	seed[0], seed[1] = byte(i), byte(i>>8)
	seed[31] = 0x4e
	key := ed25519.NewKeyFromSeed(seed)
	sk, err := crypto.UnmarshalEd25519PrivateKey(key)
	if err != nil {
		return nil, err
	}
	addr := multiaddr.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", 4000+i))
	lh, err := n.mock.AddPeer(sk, addr)
	if err != nil {
		return nil, err
	}
	shaped := newShapedHost(lh, n.opts.Bandwidth, n.opts.Latency, n.stop)
	log := n.opts.Logger.With("node", i)
	nd := &Node{Index: i}
	if nd.Pipeline, err = leios.Open(leios.Options{
		Dir:          dir,
		DBCacheBytes: n.opts.DBCacheBytes,
		// Many nodes share this process: small memtables, as the stores
		// of a few EBs need.
		DBMemTableBytes: 4 << 20,
		Limits:          n.limits,
		TxCache:         txcache.Options{TxCapacity: n.opts.TxCapacity},
		Validator:       n.validator,
		Logger:          log,
	}); err != nil {
		return nil, err
	}
	var topology []string
	for _, e := range n.edges {
		if e[1] == i { // the higher index dials
			topology = append(topology, n.nodes[e[0]].Host.P2PAddrs()...)
		}
	}
	services, err := nd.Pipeline.Services()
	if err != nil {
		_ = lh.Close()
		return nd, err
	}
	host, err := network.NewHost(network.HostOptions{
		Key:        key,
		Libp2p:     shaped,
		Topology:   topology,
		Services:   services,
		MinBackoff: 20 * time.Millisecond,
		MaxBackoff: time.Second,
		Logger:     log,
	})
	if err != nil {
		_ = lh.Close()
		return nd, err
	}
	nd.Host = host
	return nd, nil
}

// run starts node nd's loops, as node.Node.Run does.
func (n *Network) run(ctx context.Context, nd *Node) {
	n.group.Go(func() error { return nd.Pipeline.Run(ctx) })
	n.group.Go(func() error { return nd.Host.Run(ctx) })
}

// awaitConnected waits until every node is connected to all its
// neighbours. Connections are libp2p's to report; it polls them briefly.
func (n *Network) awaitConnected(ctx context.Context) error {
	for {
		missing := 0
		for _, e := range n.edges {
			a, b := n.nodes[e[0]].Host, n.nodes[e[1]].Host
			if !slices.ContainsFunc(a.Peers(), func(p network.PeerInfo) bool { return p.ID == b.ID() }) {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("leiosnet: %d links not connected: %w", missing, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Distances are the hops from node from to every node, by index (a
// breadth-first walk of the links).
func (n *Network) Distances(from int) []int {
	dist := make([]int, len(n.nodes))
	for i := range dist {
		dist[i] = -1
	}
	dist[from] = 0
	for queue := []int{from}; len(queue) > 0; queue = queue[1:] {
		at := queue[0]
		for _, e := range n.edges {
			for side, next := range e {
				if e[1-side] == at && dist[next] < 0 {
					dist[next] = dist[at] + 1
					queue = append(queue, next)
				}
			}
		}
	}
	return dist
}

// VotingDeadline is how long after an RB's slot start a committee member
// must hold the closure of its EB to vote: L_hdr + L_vote slots.
func (n *Network) VotingDeadline() time.Duration {
	lp := n.validator.Leios()
	return time.Duration(lp.LHdr+lp.LVote) * n.validator.Clock().SlotLength
}

// Nodes are the network's nodes, by index.
func (n *Network) Nodes() []*Node { return n.nodes }

// Edges are the links, each as (lower, higher) node index.
func (n *Network) Edges() [][2]int { return n.edges }

// Options are the network's options, with their defaults filled in.
func (n *Network) Options() Options { return n.opts }

// Close stops every node and waits for their goroutines, then closes the
// pipelines and mocknet and removes the temporary directory.
func (n *Network) Close() error {
	var errs []error
	n.closeOnce.Do(func() { close(n.stop) })
	if n.cancel != nil {
		n.cancel()
		if err := n.group.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	for _, nd := range n.nodes {
		if nd.Host != nil && n.group == nil { // never run: Run closes its host
			errs = append(errs, nd.Host.Close())
		}
		if nd.Pipeline != nil {
			errs = append(errs, nd.Pipeline.Close())
		}
	}
	errs = append(errs, n.mock.Close())
	if n.tempDir != "" {
		errs = append(errs, os.RemoveAll(n.tempDir))
	}
	return errors.Join(errs...)
}
