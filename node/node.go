package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/api"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/internal/version"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/peersharing"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// Options are what a node takes besides its config files.
type Options struct {
	// Logger receives the node's logs. Default slog.Default().
	Logger *slog.Logger
	// Libp2p, if set, is a libp2p host to run on instead of one built from
	// the config's node key and listen addresses: many nodes in one test,
	// on mocknet links with latency and bandwidth. Its identity must be the
	// node key's.
	Libp2p host.Host
	// AcceptLostImmutableTip opens a chain database whose immutable-tip
	// marker file is gone (chaindb.Options.AcceptLostImmutableTip).
	AcceptLostImmutableTip bool
	// TraceFile, if set, overrides the config's traceFile.
	TraceFile string
	// Equivocate makes the node's pool equivocate (forge.Options.Equivocate):
	// the devnet's chaos mode, never a real network.
	Equivocate bool
	// Now is the time the node's slot clock reads and its parts (validator,
	// Leios pipeline, mempool, forge) stamp and time things by: a test or
	// a benchmark may run a node on virtual time. Default time.Now.
	Now func() time.Time
}

// Node is one running leiosnode.
type Node struct {
	parts     // genesis, validator, clock, stores, mempool
	cfg       *config.Config
	errors    *atomic.Uint64 // log records at level error, for /status
	registry  *prometheus.Registry
	cpu       *cpuwork.Sampler // the node's CPU by kind of work
	admission *admission.Gate  // the edge: whether txs are taken in now
	host      *network.Host
	chainsync *chainsync.Service
	caughtUp  *atomic.Bool  // chain sync reached a peer's tip at least once
	forger    *forge.Forger // nil on a relay
	api       *api.Server
	// httpListener is bound by New and served by Run; nil without
	// httpAddr, and once Run has taken it.
	httpListener net.Listener
	equivocate   bool // Options.Equivocate
	started      time.Time
}

// New builds a node in one order, each part from those before it: genesis
// and validator, the keys and topology the config names and its addresses
// (all checked, and the API's bound, before a database opens), Leios
// diffusion (LeiosDB, tx cache, fetch, notify), chain database (with its
// LedgerDB), mempool, the libp2p host serving every protocol (listening),
// the forge, the API and metrics. Every listener is bound here, so an
// address in use fails New, never a node that has said it started. On
// error, whatever was opened is closed again, and the error names the file
// or setting at fault.
func New(cfg *config.Config, opts Options) (*Node, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	errCount := new(atomic.Uint64)
	n := &Node{
		parts:      parts{now: now, log: slog.New(countErrors(logger.Handler(), errCount))},
		cfg:        cfg,
		equivocate: opts.Equivocate,
		errors:     errCount,
		registry:   prometheus.NewRegistry(),
		caughtUp:   new(atomic.Bool),
	}
	if err := n.build(opts); err != nil {
		// n, not the nil the caller gets: it holds what was opened.
		n.close()
		if e, ok := errors.AsType[*pebblestore.Error](err); ok {
			return nil, e // it names the store and what to do, in one line
		}
		return nil, err
	}
	return n, nil
}

// build opens and builds the parts in New's order.
func (n *Node) build(opts Options) (err error) {
	cfg := n.cfg
	if n.cpu, err = cpuwork.New(cpuwork.Options{Registerer: n.registry, Logger: n.log.With("component", "cpuwork")}); err != nil {
		return err
	}
	if n.genesis, err = consensus.ReadGenesis(cfg.GenesisFile); err != nil {
		return err
	}
	if n.validator, err = consensus.NewValidator(n.genesis, n.now); err != nil {
		return fmt.Errorf("genesis %s: %w", cfg.GenesisFile, err)
	}
	in, err := n.readInputs()
	if err != nil {
		return err
	}
	if err = n.openTrace(cmp.Or(opts.TraceFile, cfg.TraceFile), in); err != nil {
		return err
	}
	// The addresses too are checked before a database is created: one
	// another program holds is refused with nothing written.
	if n.httpListener, err = bindAddrs(cfg, opts.Libp2p == nil); err != nil {
		return err
	}
	if err = n.parts.open(cfg, partsOptions{
		now:                    n.now,
		log:                    n.log,
		registerer:             n.registry,
		acceptLostImmutableTip: opts.AcceptLostImmutableTip,
	}); err != nil {
		return err
	}
	if err = n.registerMetrics(); err != nil {
		return err
	}
	if n.admission, err = admission.NewGate(edgeOptions(n.validator.Timing()), n.admissionFigures, n.registry); err != nil {
		return err
	}
	if err = n.buildHost(opts.Libp2p, in); err != nil {
		return err
	}
	if err = n.buildForger(in); err != nil {
		return err
	}
	if n.api, err = api.New(api.Options{
		Chain:          n.chain,
		Mempool:        n.mempool,
		Admission:      n.admission,
		CPU:            n.cpu,
		Pprof:          cfg.Pprof,
		Leios:          n.leios,
		Host:           n.host,
		Forger:         n.forger,
		Clock:          n.validator.Clock(),
		MaxTxSize:      int(n.genesis.ProtocolParams.MaxTxSize),
		Params:         n.genesis.ProtocolParams,
		Registry:       n.registry,
		BlocksAdopted:  n.adopted.Load,
		Errors:         n.errors.Load,
		TxsOnChain:     n.chain.TxsOnChain,
		CertRBsOnChain: n.chain.CertRBsOnChain,
		Forks:          n.chainsync.Forks,

		// Served with Params, so a tool derives the network's capacity.
		ActiveSlotsCoeff: n.genesis.ActiveSlotsCoeff,
		LeiosParams:      n.genesis.Leios,
	}); err != nil {
		return err
	}
	return nil
}

func (n *Node) buildHost(libp2pHost host.Host, in *inputs) error {
	if len(in.topology.Peers) == 0 {
		n.caughtUp.Store(true) // nobody to learn a chain from
	}
	chain := chainAdapter{countingChain{n.chain, n.adopted}, n.leios, nil}
	if n.trace != nil {
		chain.applied = n.traceApplied
	}
	var sharing network.PeerSharing // nil: the node takes no part
	if n.cfg.SharesPeers() {
		svc, err := peersharing.NewService(peersharing.ServiceOptions{})
		if err != nil {
			return err
		}
		sharing = svc
	}
	var err error
	n.chainsync, err = chainsync.NewService(chainsync.ServiceOptions{
		Chain:          chain,
		ValidateHeader: n.validator.ValidateHeader,
		OnValidHeader:  n.leios.Announce,
		IsInvalidBlock: isInvalidBlock,
		IsForkTooDeep:  func(err error) bool { return errors.Is(err, chaindb.ErrForkTooDeep) },
		OnCaughtUp:     func() { n.caughtUp.Store(true) },
		Logger:         n.log.With("component", "chainsync"),
		Registerer:     n.registry,
	})
	if err != nil {
		return err
	}
	blocks, err := blockfetch.NewService(blockfetch.ServiceOptions{Blocks: chain.Blocks})
	if err != nil {
		return err
	}
	leiosServices, err := n.leios.Services()
	if err != nil {
		return err
	}
	txs, err := txsubmission.NewService(txsubmission.ServiceOptions{
		Mempool: txSubmissionMempool{n.mempool},
		Options: txsubmission.Options{
			Admit: func(ctx context.Context) error { return n.admission.Wait(ctx, admission.Peers) },
		},
	})
	if err != nil {
		return err
	}
	n.host, err = network.NewHost(network.HostOptions{
		Key:         in.nodeKey,
		Libp2p:      libp2pHost,
		ListenAddrs: n.cfg.ListenAddrs,
		Topology:    in.topology.Peers,
		Services: append([]network.Service{
			n.chainsync,
			blocks,
			txs,
		}, leiosServices...),
		PeerSharing: sharing,
		TargetPeers: n.cfg.TargetPeers,
		Logger:      n.log.With("component", "network"),
		Registerer:  n.registry,
		OnMessage:   n.hostMessages(),
		// Peers see which build this is through identify.
		AgentVersion: version.Agent(),
	})
	if err != nil {
		return fmt.Errorf("config %s: listenAddrs %s: %w", n.cfg.Path, strings.Join(n.cfg.ListenAddrs, " "), err)
	}
	return nil
}

func (n *Node) buildForger(in *inputs) (err error) {
	if in.producer == nil {
		return nil
	}
	// A pool without stake starts, as a relay would: its operator may mean
	// to run it before its stake, and it serves its peers all the same.
	if pool := in.producer.pool; pool.Sigma.Sign() == 0 {
		n.log.Warn("this pool has no stake in the genesis: it will never lead a slot, so it will forge no block", "pool", pool.Name, "genesis", n.cfg.GenesisFile)
	} else if in.producer.seatless {
		n.log.Info("this pool holds no committee seat (its stake is below the committee's truncation): it forges blocks and votes on no EB", "pool", n.cfg.IssuerKeyFile)
	}
	n.forger, err = n.newForger(in.producer, n.readyToForge, n.equivocate, n.registry)
	return err
}

// Run runs the node until ctx is cancelled, then stops every loop and closes
// the databases. It returns the first error that stopped a loop, or nil on a
// clean shutdown. A database that fails (a full disk, corruption) stops
// the node, and its error is the one returned.
func (n *Node) Run(ctx context.Context) error {
	defer n.close()
	n.started = n.now()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return n.cpu.Run(ctx) })
	g.Go(func() error { return n.watchStores(ctx) })
	g.Go(func() error { return n.leios.Run(ctx) })
	g.Go(func() error { return labelled(ctx, cpuwork.Network, n.host.Run) })
	g.Go(func() error { return labelled(ctx, cpuwork.MempoolSync, n.mempool.Run) })
	g.Go(func() error { return n.admission.Run(ctx) })
	if n.forger != nil {
		g.Go(func() error { return n.forger.Run(ctx) })
	}
	if n.trace != nil {
		g.Go(func() error { return n.traceSlots(ctx) })
		g.Go(func() error {
			if err := n.trace.Run(ctx); err != nil {
				n.log.Error("the trace stopped; the node goes on", "err", err)
			}
			return nil
		})
	}
	if listener := n.httpListener; listener != nil {
		n.httpListener = nil // Serve closes it
		g.Go(func() error {
			if err := n.api.Serve(ctx, listener); err != nil {
				return fmt.Errorf("config %s: httpAddr %s: %w", n.cfg.Path, n.cfg.HTTPAddr, err)
			}
			return nil
		})
	}
	n.log.Info("node started", "version", version.String(), "peerId", n.host.ID().String(), "addrs", n.host.P2PAddrs(),
		"http", n.cfg.HTTPAddr, "tip", n.chain.Tip().String(), "producer", n.forger != nil, "peerSharing", n.cfg.SharesPeers())
	err := n.wait(g)
	if fault := n.storeFault(); fault != nil {
		return fault // the loops' errors follow from it
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// labelled runs loop with its goroutine, and those it starts, labelled k
// for the CPU accounting.
func labelled(ctx context.Context, k cpuwork.Kind, loop func(context.Context) error) error {
	var err error
	cpuwork.Do(ctx, k, func(ctx context.Context) { err = loop(ctx) })
	return err
}

// watchStores returns a database's failure as soon as there is one: a
// node whose disk is full or whose store is corrupt cannot go on.
func (n *Node) watchStores(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-n.chain.Failed():
	case <-n.leios.DB().Failed():
	}
	return n.storeFault()
}

func (n *Node) storeFault() error {
	return cmp.Or(n.chain.Err(), n.leios.DB().Err())
}

// faultGrace is how long Run waits for its loops once a database has
// failed: a loop stuck inside the failed store must not keep the node
// from stopping and saying why.
const faultGrace = 5 * time.Second

// wait waits for the loops of g, for faultGrace at most after a database
// failed.
func (n *Node) wait(g *errgroup.Group) error {
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	select {
	case err := <-done:
		return err
	case <-n.chain.Failed():
	case <-n.leios.DB().Failed():
	}
	select {
	case err := <-done:
		return err
	case <-time.After(faultGrace):
		n.log.Warn("stopping without the loops still running after a database failed")
		return nil
	}
}

// edgeOptions are the edge's bounds at the network's timing: a backlog is
// judged against how long the chain takes to include a tx, a lag against
// how long a healthy chain goes without a block, and a refused submitter is
// asked back when the next block may have changed the answer. The backlog
// is consensus.BacklogEBs blocks: full EBs by count (40,329 txs with the
// prototype's EB limits), RB bodies and EB closures by bytes, the bound
// large txs meet first. The wait counts only while the mempool holds more
// than the next two EBs take: the one awaiting its certificate and the one
// the certifying RB announces, which then goes out full.
func edgeOptions(t consensus.Timing) admission.Options {
	ebTxs := capacity.NewParams(t.SlotLength, t.F, t.Leios).MaxEBTxs()
	return admission.Options{
		MaxQueueDelay:   t.InclusionBound(),
		MaxBacklogTxs:   consensus.BacklogEBs * ebTxs,
		MaxBacklogBytes: consensus.BacklogEBs * t.Leios.BlockTxBytes(),
		NextEBsTxs:      2 * ebTxs,
		NextEBsBytes:    2 * t.Leios.EBMaxClosureBytes,
		SyncLagSlots:    t.SyncLagSlots(),
		RetryAfter:      t.MeanRBInterval(),
		SyncRetryAfter:  5 * t.MeanRBInterval(),
	}
}

// admissionFigures are how far behind the node is, for its edge.
func (n *Node) admissionFigures() admission.Figures {
	now := n.now()
	snapshot := n.mempool.Snapshot()
	oldest, _ := snapshot.OldestAdmitted()
	return admission.Figures{
		OldestAdmitted:  oldest,
		Now:             now,
		ClockSlot:       n.validator.Clock().SlotAt(now),
		TipSlot:         n.chain.Tip().Point.Slot,
		MempoolBytes:    snapshot.Bytes(),
		MempoolTxs:      snapshot.Len(),
		MempoolCapacity: n.mempool.CapacityBytes(),
		MissedInARow:    n.leios.MissedWindows(now),
	}
}

// startupGrace is how long a producer that cannot reach any peer waits
// before it forges on its own chain.
const startupGrace = 10 * time.Second

// readyToForge holds the forge back after a start until chain sync has
// caught up with a peer (or no peer could be reached for startupGrace).
func (n *Node) readyToForge() bool {
	return n.caughtUp.Load() || n.now().Sub(n.started) > startupGrace
}

// close releases what New opened, in reverse order. Safe on a partial node.
func (n *Node) close() {
	if n.httpListener != nil {
		_ = n.httpListener.Close() // never served: nothing to report
	}
	if n.host != nil {
		if err := n.host.Close(); err != nil {
			n.log.Warn("closing network host", "err", err)
		}
	}
	// A database that failed returns its failure, which Run returns.
	if err := n.parts.close(); err != nil {
		n.log.Error("closing the databases", "err", err)
	}
}
