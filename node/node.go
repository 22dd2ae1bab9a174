package node

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/api"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/txsubmission"
	"github.com/leiosnode/leiosnode/txcache"
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
}

// Node is one running leiosnode.
type Node struct {
	cfg       *config.Config
	log       *slog.Logger
	errors    *atomic.Uint64 // log records at level error, for /status
	genesis   *consensus.Genesis
	validator *consensus.Validator
	registry  *prometheus.Registry
	chain     *chaindb.DB
	adopted   *atomic.Uint64 // blocks that changed the selection when added
	mempool   *mempool.Mempool
	leios     *leios.Pipeline
	host      *network.Host
	chainsync *chainsync.Service
	caughtUp  *atomic.Bool  // chain sync reached a peer's tip at least once
	forger    *forge.Forger // nil on a relay
	api       *api.Server
	started   time.Time
}

// New builds a node in one order, each part from those before it: genesis
// and validator, chain database (with its LedgerDB), mempool, Leios
// diffusion (LeiosDB, tx cache, fetch, notify), the libp2p host serving
// every protocol, the forge, metrics. On error, whatever was opened is
// closed again.
func New(cfg *config.Config, opts Options) (n *Node, err error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	errCount := new(atomic.Uint64)
	n = &Node{
		cfg:      cfg,
		log:      slog.New(countErrors(logger.Handler(), errCount)),
		errors:   errCount,
		registry: prometheus.NewRegistry(),
		adopted:  new(atomic.Uint64),
		caughtUp: new(atomic.Bool),
	}
	defer func() {
		if err != nil {
			n.close()
		}
	}()

	if n.genesis, err = consensus.ReadGenesis(cfg.GenesisFile); err != nil {
		return nil, err
	}
	if n.validator, err = consensus.NewValidator(n.genesis, nil); err != nil {
		return nil, err
	}
	// The Leios pipeline opens before the chain: replaying a CertRB applies
	// its certified closure from the LeiosDB.
	if n.leios, err = leios.Open(leios.Options{
		Dir:        filepath.Join(cfg.DatabasePath, "leios"),
		Limits:     n.genesis.Leios.EBLimits(),
		TxCache:    txcache.Options{TxCapacity: cfg.TxCacheCapacity},
		Validator:  n.validator,
		Ledger:     n.genesis.ProtocolParams,
		Registerer: n.registry,
		Logger:     n.log,
	}); err != nil {
		return nil, err
	}
	if err = n.openChain(); err != nil {
		return nil, err
	}
	if err = n.buildMempool(); err != nil {
		return nil, err
	}
	n.leios.Attach(n.chain, n.mempool)
	if err = n.buildHost(opts.Libp2p); err != nil {
		return nil, err
	}
	if err = n.buildForger(); err != nil {
		return nil, err
	}
	if n.api, err = api.New(api.Options{
		Addr:          cfg.HTTPAddr,
		Chain:         n.chain,
		Mempool:       n.mempool,
		Leios:         n.leios,
		Host:          n.host,
		Forger:        n.forger,
		Clock:         n.validator.Clock(),
		MaxTxSize:     int(n.genesis.ProtocolParams.MaxTxSize),
		Registry:      n.registry,
		BlocksAdopted: n.adopted.Load,
		Errors:        n.errors.Load,
		TxsOnChain:    n.chain.TxsOnChain,
		Forks:         n.chainsync.Forks,
	}); err != nil {
		return nil, err
	}
	return n, nil
}

func (n *Node) openChain() error {
	genesisUTxO, err := ledger.GenesisUTxO(n.genesis.InitialFunds)
	if err != nil {
		return err
	}
	n.chain, err = chaindb.Open(filepath.Join(n.cfg.DatabasePath, "chain"), chaindb.Options{
		K:             n.genesis.SecurityParam,
		GenesisUTxO:   genesisUTxO,
		ApplyBlock:    n.leios.ApplyBlock,
		ValidateBlock: n.validator.ValidateBlock,
		Logger:        n.log.With("component", "chaindb"),
	})
	return err
}

func (n *Node) buildMempool() error {
	clock := n.validator.Clock()
	var err error
	n.mempool, err = mempool.New(mempool.Options{
		TipLedger:  n.chain.TipUTxO,
		TipChanged: n.chain.TipChanged,
		Abandoned:  n.abandonedTxs,
		// Txs are checked for the slot now in progress: that is where the
		// next block can put them.
		Slot:   func() uint64 { return clock.SlotAt(time.Now()) },
		Params: n.genesis.ProtocolParams,
		Logger: n.log.With("component", "mempool"),
	})
	return err
}

func (n *Node) buildHost(libp2pHost host.Host) error {
	nodeKey, err := keys.ReadSigningKey(n.cfg.NodeKeyFile, keys.Node)
	if err != nil {
		return err
	}
	topology, err := config.ReadTopology(n.cfg.TopologyFile)
	if err != nil {
		return err
	}
	if len(topology.Peers) == 0 {
		n.caughtUp.Store(true) // nobody to learn a chain from
	}
	chain := chainAdapter{countingChain{n.chain, n.adopted}}
	n.chainsync = chainsync.NewService(chainsync.Options{
		Chain:          chain,
		ValidateHeader: n.validator.ValidateHeader,
		OnValidHeader:  n.leios.Announce,
		IsInvalidBlock: isInvalidBlock,
		IsForkTooDeep:  func(err error) bool { return errors.Is(err, chaindb.ErrForkTooDeep) },
		OnCaughtUp:     func() { n.caughtUp.Store(true) },
		Logger:         n.log.With("component", "chainsync"),
	})
	n.host, err = network.NewHost(network.HostOptions{
		Key:         nodeKey,
		Libp2p:      libp2pHost,
		ListenAddrs: n.cfg.ListenAddrs,
		Topology:    topology.Peers,
		Services: append([]network.Service{
			n.chainsync,
			blockfetch.NewService(chain.BlockRange),
			txsubmission.NewService(txSubmissionMempool{n.mempool}, txsubmission.Options{}),
		}, n.leios.Services()...),
		Logger:     n.log.With("component", "network"),
		Registerer: n.registry,
	})
	return err
}

func (n *Node) buildForger() error {
	if n.cfg.IssuerKeyFile == "" {
		return nil
	}
	issuer, err := keys.ReadSigningKey(n.cfg.IssuerKeyFile, keys.StakePool)
	if err != nil {
		return err
	}
	vrfKey, err := keys.ReadVRFSigningKey(n.cfg.VRFKeyFile)
	if err != nil {
		return err
	}
	var voter *consensus.Voter
	if n.cfg.BLSKeyFile != "" {
		votingKey, err := keys.ReadBLSSigningKey(n.cfg.BLSKeyFile)
		if err != nil {
			return err
		}
		var issuerVKey block.Bytes32
		copy(issuerVKey[:], ed25519.PrivateKey(issuer).Public().(ed25519.PublicKey))
		if voter, err = n.validator.Committee().NewVoter(issuerVKey, votingKey); err != nil {
			return fmt.Errorf("config %s: blsSigningKeyFile: %w", n.cfg.BLSKeyFile, err)
		}
	}
	n.forger, err = forge.New(forge.Options{
		Validator:      n.validator,
		Ledger:         n.chain,
		Chain:          forgeChain{countingChain{n.chain, n.adopted}},
		IssuerKey:      ed25519.PrivateKey(issuer),
		VRFKey:         vrfKey,
		Mempool:        n.mempool,
		IsInvalidBlock: func(err error) bool { return errors.Is(err, chaindb.ErrInvalidBlock) },
		Ready:          n.readyToForge,
		EBLimits:       n.genesis.Leios.EBLimits(),
		Leios:          n.leios,
		Voter:          voter,
		Params:         &n.genesis.ProtocolParams,
		RBMaxBodyBytes: n.genesis.Leios.RBMaxBodyBytes,
		Logger:         n.log.With("component", "forge"),
	})
	return err
}

// Run runs the node until ctx is cancelled, then stops every loop and closes
// the databases. It returns the first error that stopped a loop, or nil on a
// clean shutdown.
func (n *Node) Run(ctx context.Context) error {
	defer n.close()
	n.started = time.Now()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return n.leios.Run(ctx) })
	g.Go(func() error { return n.host.Run(ctx) })
	g.Go(func() error { return n.mempool.Run(ctx) })
	if n.forger != nil {
		g.Go(func() error { return n.forger.Run(ctx) })
	}
	if n.cfg.HTTPAddr != "" {
		g.Go(func() error { return n.api.Serve(ctx) })
	}
	n.log.Info("node started", "peerId", n.host.ID().String(), "addrs", n.host.P2PAddrs(),
		"tip", n.chain.Tip().String(), "producer", n.forger != nil)
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// startupGrace is how long a producer that cannot reach any peer waits
// before it forges on its own chain.
const startupGrace = 10 * time.Second

// readyToForge holds the forge back after a start until chain sync has
// caught up with a peer (or no peer could be reached for startupGrace).
func (n *Node) readyToForge() bool {
	return n.caughtUp.Load() || time.Since(n.started) > startupGrace
}

// close releases what New opened, in reverse order. Safe on a partial node.
func (n *Node) close() {
	if n.host != nil {
		if err := n.host.Close(); err != nil {
			n.log.Warn("closing network host", "err", err)
		}
	}
	if n.mempool != nil {
		n.mempool.Close()
	}
	if n.leios != nil {
		if err := n.leios.Close(); err != nil {
			n.log.Error("closing the LeiosDB", "err", err)
		}
	}
	if n.chain != nil {
		if err := n.chain.Close(); err != nil {
			n.log.Error("closing chain database", "err", err)
		}
	}
}
