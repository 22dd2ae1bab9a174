package node

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/internal/simtrace"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/txcache"
	"github.com/leiosnode/leiosnode/vrf"
)

// parts are a node's stores and mempool, the one place they are wired
// together (New, and OpenLocal for benchmarks): the Leios pipeline first
// (replaying a CertRB applies its certified closure from the LeiosDB), the
// chain database with its LedgerDB, the mempool on the chain's tip, then the
// pipeline attached to both.
type parts struct {
	genesis   *consensus.Genesis
	validator *consensus.Validator
	now       func() time.Time
	log       *slog.Logger
	leios     *leios.Pipeline
	chain     *chaindb.DB
	adopted   *atomic.Uint64 // blocks that changed the selection when added
	mempool   *mempool.Mempool
	trace     *simtrace.Writer // nil: no trace
}

// partsOptions are what parts.open takes besides the config and genesis.
type partsOptions struct {
	now                    func() time.Time
	log                    *slog.Logger
	registerer             prometheus.Registerer
	acceptLostImmutableTip bool
}

// open opens the parts in their order into p, whose genesis and validator
// are set. On error p holds what was opened, for close.
func (p *parts) open(cfg *config.Config, opts partsOptions) (err error) {
	p.now, p.log, p.adopted = opts.now, opts.log, new(atomic.Uint64)
	g := p.genesis
	genesisUTxO, err := ledger.GenesisUTxO(g.InitialFunds)
	if err != nil {
		return fmt.Errorf("genesis %s: %w", cfg.GenesisFile, err)
	}
	chainOpts := chaindb.Options{
		K:             g.SecurityParam,
		GenesisUTxO:   genesisUTxO,
		Network:       networkOf(cfg, g),
		ValidateBlock: p.validator.ValidateBlock,
		// Two leaders within the header diffusion period forged without
		// seeing each other's block: every node breaks the tie alike, so
		// the committee votes for one EB, not for two halves.
		TiebreakSlots: uint64(max(g.Leios.LHdr, 0)),
		Logger:        p.log.With("component", "chaindb"),

		AcceptLostImmutableTip: opts.acceptLostImmutableTip,
		Registerer:             opts.registerer,
	}
	// The chain is checked read-only before the LeiosDB is opened for
	// writing (each store checks itself read-only before it writes): a
	// start refused for either leaves both as they were.
	if err := chaindb.CheckOpen(cfg.ChainDBDir(), chainOpts); err != nil {
		return bothOfAnotherNetwork(cfg, g, err)
	}
	if p.leios, err = leios.Open(leios.Options{
		Protocols:  cfg.LeiosProtocols,
		Dir:        cfg.LeiosDBDir(),
		Network:    networkOf(cfg, g),
		Limits:     g.Leios.EBLimits(),
		TxCache:    txcache.Options{TxCapacity: cfg.TxCacheCapacity},
		Validator:  p.validator,
		Ledger:     g.ProtocolParams,
		Registerer: opts.registerer,
		Now:        p.now,
		Logger:     p.log,
	}); err != nil {
		return err
	}
	chainOpts.ApplyBlock = p.leios.ApplyBlock
	if p.chain, err = chaindb.Open(cfg.ChainDBDir(), chainOpts); err != nil {
		return err
	}
	clock := p.validator.Clock()
	if p.mempool, err = mempool.New(mempool.Options{
		TipLedger:  p.chain.TipUTxO,
		TipChanged: p.chain.TipChanged,
		Abandoned:  p.abandonedTxs,
		// Txs are checked for the slot now in progress: that is where the
		// next block can put them.
		Slot:   func() uint64 { return clock.SlotAt(p.now()) },
		Params: g.ProtocolParams,
		// Room for the backlog the edge lets in and a block more for
		// peers' txs, consensus.MempoolBlocks blocks' worth of txs, RB and
		// EB, of this network: an EB is cleared only when the next RB
		// certifies it, so room for two blocks of large txs fills in one
		// long gap between RBs at a load the chain carries.
		CapacityBytes: consensus.MempoolBlocks * g.Leios.BlockTxBytes(),
		Logger:        p.log.With("component", "mempool"),
		Now:           p.now,
		Registerer:    opts.registerer,
	}); err != nil {
		return err
	}
	return p.leios.Attach(p.chain, p.mempool)
}

// bothOfAnotherNetwork is chainErr, the chain's refusal, unless it is
// that the chain belongs to another network and the LeiosDB does too: then
// the advice is to delete the whole databasePath, not the chain alone.
func bothOfAnotherNetwork(cfg *config.Config, g *consensus.Genesis, chainErr error) error {
	e, ok := errors.AsType[*pebblestore.Error](chainErr)
	if !ok || !errors.Is(chainErr, pebblestore.ErrOtherNetwork) {
		return chainErr
	}
	leiosErr := leiosdb.CheckOpen(cfg.LeiosDBDir(), leiosdb.Options{Limits: g.Leios.EBLimits(), Network: networkOf(cfg, g)})
	if !errors.Is(leiosErr, pebblestore.ErrOtherNetwork) {
		return chainErr
	}
	both := *e
	both.Do = fmt.Sprintf("start it with that genesis, or delete the node's databasePath %s (its LeiosDB is of that network too) to join this network from its peers", cfg.DatabasePath)
	return &both
}

// producer is a stake pool's keys, read from the files its config names.
type producer struct {
	pool   consensus.PoolInfo // the genesis's pool of these keys
	issuer ed25519.PrivateKey
	vrfKey *vrf.SecretKey
	voter  *consensus.Voter // nil without a BLS key, or without a seat
	// seatless: the pool's stake is below the committee's truncation, so
	// it forges but has no vote.
	seatless bool
}

// readProducer reads and checks the pool keys cfg names against the
// genesis: nil without an issuer key (a relay).
func readProducer(cfg *config.Config, validator *consensus.Validator) (*producer, error) {
	if cfg.IssuerKeyFile == "" {
		return nil, nil
	}
	pr := &producer{}
	var err error
	if pr.issuer, err = readPrivate(cfg.IssuerKeyFile, func(path string) (ed25519.PrivateKey, error) {
		return keys.ReadSigningKey(path, keys.StakePool)
	}); err != nil {
		return nil, fmt.Errorf("config %s: issuerSigningKeyFile: %w", cfg.Path, err)
	}
	if pr.vrfKey, err = readPrivate(cfg.VRFKeyFile, keys.ReadVRFSigningKey); err != nil {
		return nil, fmt.Errorf("config %s: vrfSigningKeyFile: %w", cfg.Path, err)
	}
	var issuerVKey block.Bytes32
	copy(issuerVKey[:], pr.issuer.Public().(ed25519.PublicKey))
	pool, ok := validator.Pool(issuerVKey)
	if !ok {
		return nil, fmt.Errorf("config %s: issuerSigningKeyFile %s: no pool of genesis %s has this issuer key",
			cfg.Path, cfg.IssuerKeyFile, cfg.GenesisFile)
	}
	pr.pool = pool
	if pool.VRFVKey != vrf.PublicKey(pr.vrfKey.Public()) {
		return nil, fmt.Errorf("config %s: vrfSigningKeyFile %s: not the VRF key of pool %s, whose issuer key is issuerSigningKeyFile's",
			cfg.Path, cfg.VRFKeyFile, pool.Name)
	}
	if cfg.BLSKeyFile == "" {
		return pr, nil
	}
	votingKey, err := readPrivate(cfg.BLSKeyFile, keys.ReadBLSSigningKey)
	if err != nil {
		return nil, fmt.Errorf("config %s: blsSigningKeyFile: %w", cfg.Path, err)
	}
	pr.voter, err = validator.Committee().NewVoter(issuerVKey, votingKey)
	if errors.Is(err, consensus.ErrNotOnCommittee) {
		pr.seatless = true
		return pr, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: blsSigningKeyFile %s: %w", cfg.Path, cfg.BLSKeyFile, err)
	}
	return pr, nil
}

// newForger builds pr's forger on the parts' chain, mempool and pipeline.
// ready may be nil: always ready. reg, if set, takes its metrics.
func (p *parts) newForger(pr *producer, ready func() bool, equivocate bool, reg prometheus.Registerer) (*forge.Forger, error) {
	g := p.genesis
	return forge.New(forge.Options{
		Validator:      p.validator,
		Ledger:         p.chain,
		Chain:          forgeChain{countingChain{p.chain, p.adopted}},
		IssuerKey:      pr.issuer,
		VRFKey:         pr.vrfKey,
		Mempool:        forgeMempool{p.mempool},
		IsInvalidBlock: func(err error) bool { return errors.Is(err, chaindb.ErrInvalidBlock) },
		Ready:          ready,
		EBLimits:       g.Leios.EBLimits(),
		Leios:          p.leios,
		Voter:          pr.voter,
		Params:         &g.ProtocolParams,
		RBMaxBodyBytes: g.Leios.RBMaxBodyBytes,
		Equivocate:     equivocate,
		Trace:          p.trace,
		Now:            p.now,
		Logger:         p.log.With("component", "forge"),
		Registerer:     reg,
	})
}

// close releases what open opened, in reverse order, and returns the
// databases' errors on closing — not a failure they already reported
// (Err), which the node returns from Run. Safe on partial parts.
func (p *parts) close() error {
	if p.mempool != nil {
		p.mempool.Close()
	}
	var errs []error
	if p.leios != nil {
		if err := p.leios.Close(); err != nil && p.leios.DB().Err() == nil {
			errs = append(errs, fmt.Errorf("closing the LeiosDB: %w", err))
		}
	}
	if p.chain != nil {
		if err := p.chain.Close(); err != nil && p.chain.Err() == nil {
			errs = append(errs, fmt.Errorf("closing the chain database: %w", err))
		}
	}
	return errors.Join(errs...)
}
