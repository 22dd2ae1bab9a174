package sync

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/internal/devnet"
	"github.com/leiosnode/leiosnode/internal/devnet/layout"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/node"
)

// chainSpec says what chain forgeSyncChain forges.
type chainSpec struct {
	blocks       int     // at least this many blocks
	minCertified int     // and at least this many certified EBs
	txRate       float64 // txs offered per second of chain time
	funded       int     // funded addresses, one chain of txs each
}

// syncChain is a devnet chain forged for the sync benchmark: the devnet's
// files (genesis, keys, configs) and node-0's databases holding the chain,
// its EBs and their closures.
type syncChain struct {
	layout  *layout.Layout
	genesis *consensus.Genesis
	// blocks are the chain's blocks in order, for the in-process
	// validation.
	blocks []*block.Block
	tip    block.Tip
	stats  syncChainStats
}

// syncChainStats describe the forged chain.
type syncChainStats struct {
	Blocks        int     `json:"blocks"`
	Slots         uint64  `json:"slots"`
	ChainSeconds  float64 `json:"chain_seconds"` // slots × slot length
	Txs           uint64  `json:"txs"`
	TxsViaRBs     uint64  `json:"txs_via_rbs"`
	TxsViaEBs     uint64  `json:"txs_via_certified_ebs"`
	EBsAnnounced  int     `json:"ebs_announced"`
	EBsCertified  int     `json:"ebs_certified"`
	Bytes         uint64  `json:"bytes"`    // blocks, and the certified EBs' bodies and closures
	EBBytes       uint64  `json:"eb_bytes"` // the certified EBs' bodies and closures
	TxRate        float64 `json:"tx_rate"`
	ForgeSeconds  float64 `json:"forge_seconds"`
	FundedChains  int     `json:"funded_chains"`
	SlotLengthMs  uint64  `json:"slot_length_ms"`
	ActiveSlots   string  `json:"active_slots_coeff"`
	SecurityParam int     `json:"security_param"`
}

// nodeDatabases are where a node keeps its databases, as node.New opens
// them: the config's databasePath holds chain/ and leios/. The benchmark
// writes node-0's directly; the sync check (the sources serve the chain's
// tip) catches a layout that moved.
func nodeDatabases(cfg *config.Config) (chain, leiosDir string) {
	return filepath.Join(cfg.DatabasePath, "chain"), filepath.Join(cfg.DatabasePath, "leios")
}

// forgeSyncChain writes a devnet of three pools into dir and forges its
// chain into node-0's databases with the node's own parts — Leios
// pipeline, chain database, mempool, one forge.Forger per pool, its votes
// and certificates — slot after slot on a virtual clock, far faster than
// the slots would pass: the system start is a day ago, and each slot's
// clock is its start. Each slot, before the leader check, the mempool gets
// that slot's share of spec.txRate from chains of signed txs (each tx
// spends its predecessor's output), as the devnet's firehose builds them.
func forgeSyncChain(ctx context.Context, dir string, spec chainSpec, progress io.Writer) (*syncChain, error) {
	template, err := layout.LoadTemplate("")
	if err != nil {
		return nil, err
	}
	layout, err := layout.Write(layout.Spec{
		Dir: dir, Nodes: 3, Funded: spec.funded, Template: template,
		SystemStart: time.Now().Add(-24 * time.Hour),
	})
	if err != nil {
		return nil, err
	}
	cfgs := make([]*config.Config, len(layout.Nodes))
	for i, n := range layout.Nodes {
		if cfgs[i], err = config.Load(n.ConfigFile); err != nil {
			return nil, err
		}
	}
	g, err := consensus.ReadGenesis(cfgs[0].GenesisFile)
	if err != nil {
		return nil, err
	}
	f := &chainForge{genesis: g, clock: g.Clock()}
	if err := f.open(cfgs); err != nil {
		f.close()
		return nil, err
	}
	chain := &syncChain{layout: layout, genesis: g}
	started := time.Now()
	err = f.run(ctx, spec, filepath.Join(dir, "funds"), progress)
	if err == nil {
		chain.stats, chain.blocks, err = f.describe()
	}
	if closeErr := f.close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, err
	}
	chain.stats.ForgeSeconds = time.Since(started).Seconds()
	chain.stats.TxRate, chain.stats.FundedChains = spec.txRate, spec.funded
	last := chain.blocks[len(chain.blocks)-1]
	chain.tip = block.Tip{Point: last.Point(), BlockNumber: last.Header.BlockNumber}
	return chain, nil
}

// chainForge is node-0's parts, wired as node.New wires them, with every
// pool's forger and a virtual clock.
type chainForge struct {
	genesis *consensus.Genesis
	clock   consensus.Clock
	slot    atomic.Uint64 // the virtual clock: the slot being forged

	pipeline *leios.Pipeline
	chain    *chaindb.DB
	mempool  *mempool.Mempool
	forgers  []*forge.Forger

	cancel context.CancelFunc
	group  *errgroup.Group
}

// now is the virtual clock: the start of the slot being forged.
func (f *chainForge) now() time.Time { return f.clock.SlotStart(f.slot.Load()) }

func (f *chainForge) open(cfgs []*config.Config) error {
	g := f.genesis
	validator, err := consensus.NewValidator(g, f.now)
	if err != nil {
		return err
	}
	quiet := slog.New(slog.DiscardHandler)
	network := pebblestore.Network{Genesis: g.FileHash, About: "leiosbench sync chain"}
	chainDir, leiosDir := nodeDatabases(cfgs[0])
	if f.pipeline, err = leios.Open(leios.Options{
		Dir: leiosDir, Network: network, Limits: g.Leios.EBLimits(),
		Validator: validator, Ledger: g.ProtocolParams, Now: f.now, Logger: quiet,
	}); err != nil {
		return err
	}
	genesisUTxO, err := ledger.GenesisUTxO(g.InitialFunds)
	if err != nil {
		return err
	}
	if f.chain, err = chaindb.Open(chainDir, chaindb.Options{
		K: g.SecurityParam, GenesisUTxO: genesisUTxO, Network: network,
		ApplyBlock: f.pipeline.ApplyBlock, ValidateBlock: validator.ValidateBlock, Logger: quiet,
	}); err != nil {
		return err
	}
	if f.mempool, err = mempool.New(mempool.Options{
		TipLedger: f.chain.TipUTxO, TipChanged: f.chain.TipChanged,
		Slot: f.slot.Load, Params: g.ProtocolParams, Logger: quiet,
	}); err != nil {
		return err
	}
	f.pipeline.Attach(f.chain, f.mempool)
	for _, cfg := range cfgs {
		fg, err := newPoolForger(cfg, validator, f)
		if err != nil {
			return err
		}
		f.forgers = append(f.forgers, fg)
	}
	// The pipeline's own loops: offers, and the promotion of certified EBs
	// and pruning as the immutable tip advances.
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.group, ctx = errgroup.WithContext(ctx)
	f.group.Go(func() error { return f.pipeline.Run(ctx) })
	return nil
}

// newPoolForger reads a pool's keys from its node's config and builds its
// forger on the shared chain, as node.New builds a producer's.
func newPoolForger(cfg *config.Config, validator *consensus.Validator, f *chainForge) (*forge.Forger, error) {
	issuer, err := keys.ReadSigningKey(cfg.IssuerKeyFile, keys.StakePool)
	if err != nil {
		return nil, err
	}
	vrfKey, err := keys.ReadVRFSigningKey(cfg.VRFKeyFile)
	if err != nil {
		return nil, err
	}
	votingKey, err := keys.ReadBLSSigningKey(cfg.BLSKeyFile)
	if err != nil {
		return nil, err
	}
	var issuerVKey block.Bytes32
	copy(issuerVKey[:], issuer.Public().(ed25519.PublicKey))
	voter, err := validator.Committee().NewVoter(issuerVKey, votingKey)
	if err != nil {
		return nil, err
	}
	g := f.genesis
	return forge.New(forge.Options{
		Validator:      validator,
		Ledger:         f.chain,
		Chain:          forgeChain{f.chain},
		IssuerKey:      issuer,
		VRFKey:         vrfKey,
		Mempool:        node.ForgeMempool(f.mempool),
		IsInvalidBlock: func(err error) bool { return errors.Is(err, chaindb.ErrInvalidBlock) },
		EBLimits:       g.Leios.EBLimits(),
		Leios:          f.pipeline,
		Voter:          voter,
		Params:         &g.ProtocolParams,
		RBMaxBodyBytes: g.Leios.RBMaxBodyBytes,
		Now:            f.now,
		Logger:         slog.New(slog.DiscardHandler),
	})
}

// forgeChain presents the chain database as forge.Chain.
type forgeChain struct{ db *chaindb.DB }

func (c forgeChain) AddBlock(blk *block.Block) (bool, error) {
	res, err := c.db.AddBlock(blk)
	return res.Adopted, err
}

// run forges slot after slot until the chain holds spec.blocks blocks and
// spec.minCertified certified EBs.
func (f *chainForge) run(ctx context.Context, spec chainSpec, fundsDir string, progress io.Writer) error {
	payers, err := loadPayers(fundsDir, f.genesis)
	if err != nil {
		return err
	}
	perSlot := spec.txRate * f.clock.SlotLength.Seconds()
	offered, certified := 0.0, 0
	next := 0 // the payer of the next tx
	maxSlots := uint64(100*spec.blocks + 10_000)
	for slot := uint64(1); ; slot++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		tip := f.chain.Tip()
		if int(tip.BlockNumber) >= spec.blocks && certified >= spec.minCertified {
			return nil
		}
		if slot > maxSlots {
			return fmt.Errorf("forging: %d slots gave %d blocks and %d certified EBs, want %d and %d",
				maxSlots, tip.BlockNumber, certified, spec.blocks, spec.minCertified)
		}
		f.slot.Store(slot)
		// The slot's txs, unless the mempool is half full already: more
		// than the blocks take would only wait.
		for offered += perSlot; offered >= 1; offered-- {
			if f.mempool.Snapshot().Bytes() > f.mempool.CapacityBytes()/2 {
				offered = 0
				break
			}
			p := payers[next%len(payers)]
			next++
			if err := p.pay(ctx, f.genesis.ProtocolParams, f.mempool); err != nil {
				return err
			}
		}
		for _, fg := range f.forgers {
			blk, err := fg.ForgeSlot(slot)
			if err != nil {
				return fmt.Errorf("forging slot %d: %w", slot, err)
			}
			if blk == nil {
				continue
			}
			if blk.Body.Certificate != nil {
				certified++
			}
			if _, err := f.mempool.Sync(ctx); err != nil {
				return err
			}
			if n := blk.Header.BlockNumber; n%50 == 0 {
				fmt.Fprintf(progress, "sync: forged block %d (slot %d), %d certified EBs\n", n, slot, certified)
			}
		}
		for _, fg := range f.forgers {
			fg.VoteSlot(slot)
		}
	}
}

// describe walks the forged chain: its blocks, in order, and what they
// hold. Every certified closure must be held and, below the immutable tip,
// kept for good, or the sources could not serve it.
func (f *chainForge) describe() (syncChainStats, []*block.Block, error) {
	g := f.genesis
	s := syncChainStats{SlotLengthMs: uint64(g.SlotLengthMs), ActiveSlots: string(g.ActiveSlotsCoeff), SecurityParam: g.SecurityParam}
	tip, immutable := f.chain.Tip(), f.chain.ImmutableTip()
	var blocks []*block.Block
	var parent *block.Header
	for n := uint64(1); n <= tip.BlockNumber; n++ {
		blk, err := f.chain.BlockByNumber(n)
		if err != nil {
			return s, nil, err
		}
		blocks = append(blocks, blk)
		s.Bytes += uint64(len(blk.Bytes()))
		s.TxsViaRBs += uint64(len(blk.Body.Txs))
		if blk.Header.Announcement != nil {
			s.EBsAnnounced++
		}
		if pt, ok := consensus.CertifiedPoint(blk, parent); ok {
			closure, held, err := f.pipeline.Closure(pt)
			if err != nil || !held {
				return s, nil, fmt.Errorf("the closure certified by block %d is not held (%v)", n, err)
			}
			info, _, err := f.pipeline.DB().PointInfo(pt)
			if err != nil {
				return s, nil, err
			}
			if n <= immutable.BlockNumber && !info.Promoted {
				return s, nil, fmt.Errorf("the EB certified by immutable block %d is not kept for good: a node would drop it", n)
			}
			s.EBsCertified++
			s.TxsViaEBs += uint64(len(closure))
			s.EBBytes += uint64(parent.Announcement.EbSize)
			for _, tx := range closure {
				s.EBBytes += uint64(len(tx))
			}
		}
		parent = blk.Header
	}
	s.Blocks = len(blocks)
	s.Bytes += s.EBBytes
	s.Slots = tip.Point.Slot
	s.ChainSeconds = float64(tip.Point.Slot) * f.clock.SlotLength.Seconds()
	s.Txs = s.TxsViaRBs + s.TxsViaEBs
	if s.Blocks == 0 {
		return s, nil, errors.New("no block was forged")
	}
	return s, blocks, nil
}

// close stops the pipeline's loops and closes what open opened.
func (f *chainForge) close() error {
	var errs []error
	if f.cancel != nil {
		f.cancel()
		if err := f.group.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	if f.mempool != nil {
		f.mempool.Close()
	}
	if f.chain != nil {
		errs = append(errs, f.chain.Close())
	}
	if f.pipeline != nil {
		errs = append(errs, f.pipeline.Close())
	}
	return errors.Join(errs...)
}

// payer is one funded address paying itself, tx after tx: each spends the
// output of the one before (the first the genesis funds) and pays it all,
// less the minimum fee, back to the address.
type payer struct {
	key     ed25519.PrivateKey
	address []byte
	head    ledger.TxIn
	coin    uint64
}

// loadPayers reads the funded addresses' payment keys, as the devnet's
// firehose does (devnet.FundedKeys).
func loadPayers(fundsDir string, g *consensus.Genesis) ([]*payer, error) {
	funded, err := devnet.FundedKeys(fundsDir, g)
	if err != nil {
		return nil, err
	}
	var payers []*payer
	for _, f := range funded {
		payers = append(payers, &payer{key: f.Key, address: f.Address, head: ledger.GenesisTxIn(f.Address), coin: f.Coin})
	}
	if len(payers) == 0 {
		return nil, fmt.Errorf("no payment keys in %s", fundsDir)
	}
	return payers, nil
}

// pay builds the payer's next tx and adds it to the mempool.
func (p *payer) pay(ctx context.Context, params ledger.Params, pool *mempool.Mempool) error {
	tx, err := ledger.BuildPayment(params, []ledger.TxIn{p.head}, p.coin, nil, p.address, nil, []ed25519.PrivateKey{p.key})
	if err != nil {
		return err
	}
	if err := pool.Add(ctx, tx); err != nil {
		return fmt.Errorf("adding a tx to the forging mempool: %w", err)
	}
	p.head, p.coin = ledger.TxIn{TxID: tx.ID(), Index: 0}, tx.Outputs[0].Coin
	return nil
}
