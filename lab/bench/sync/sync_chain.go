package sync

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/load"
	"github.com/leiosnode/leiosnode/ledger"
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
	return cfg.ChainDBDir(), cfg.LeiosDBDir()
}

// forgeSyncChain writes a devnet of three pools into dir and forges its
// chain into node-0's databases with the node's own parts (node.OpenLocal:
// Leios pipeline, chain database, mempool, and every pool's forger with its
// votes and certificates) slot after slot on a virtual clock, far faster
// than the slots would pass: the system start is a day ago, and each
// slot's clock is its start. Each slot, before the leader check, the
// mempool gets that slot's share of spec.txRate from chains of signed txs
// (each tx spends its predecessor's output), as the devnet's firehose
// builds them.
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
	if f.local, err = node.OpenLocal(cfgs[0], node.LocalOptions{Pools: cfgs, Now: f.now}); err != nil {
		return nil, err
	}
	chain := &syncChain{layout: layout, genesis: g}
	started := time.Now()
	err = f.forge(ctx, spec, filepath.Join(dir, "funds"), progress)
	if err == nil {
		chain.stats, chain.blocks, err = f.describe()
	}
	if closeErr := f.local.Close(); err == nil {
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

// chainForge is node-0's parts with every pool's forger, on a virtual
// clock.
type chainForge struct {
	genesis *consensus.Genesis
	clock   consensus.Clock
	slot    atomic.Uint64 // the virtual clock: the slot being forged
	local   *node.Local
}

// now is the virtual clock: the start of the slot being forged.
func (f *chainForge) now() time.Time { return f.clock.SlotStart(f.slot.Load()) }

// forge runs the pipeline's loops while run forges.
func (f *chainForge) forge(ctx context.Context, spec chainSpec, fundsDir string, progress io.Writer) error {
	g, ctx := errgroup.WithContext(ctx)
	loops, stop := context.WithCancel(ctx)
	g.Go(func() error {
		if err := f.local.Run(loops); !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		defer stop()
		return f.run(ctx, spec, fundsDir, progress)
	})
	return g.Wait()
}

// run forges slot after slot until the chain holds spec.blocks blocks and
// spec.minCertified certified EBs.
func (f *chainForge) run(ctx context.Context, spec chainSpec, fundsDir string, progress io.Writer) error {
	payers, err := loadPayers(fundsDir, f.genesis)
	if err != nil {
		return err
	}
	chain, pool := f.local.Chain(), f.local.Mempool()
	perSlot := spec.txRate * f.clock.SlotLength.Seconds()
	offered, certified := 0.0, 0
	next := 0 // the payer of the next tx
	maxSlots := uint64(100*spec.blocks + 10_000)
	for slot := uint64(1); ; slot++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		tip := chain.Tip()
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
			if pool.Snapshot().Bytes() > pool.CapacityBytes()/2 {
				offered = 0
				break
			}
			p := payers[next%len(payers)]
			next++
			if err := p.pay(ctx, f.genesis.ProtocolParams, pool); err != nil {
				return err
			}
		}
		for _, fg := range f.local.Forgers() {
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
			if _, err := pool.Sync(ctx); err != nil {
				return err
			}
			if n := blk.Header.BlockNumber; n%50 == 0 {
				fmt.Fprintf(progress, "sync: forged block %d (slot %d), %d certified EBs\n", n, slot, certified)
			}
		}
		for _, fg := range f.local.Forgers() {
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
	chain, pipeline := f.local.Chain(), f.local.Leios()
	tip, immutable := chain.Tip(), chain.ImmutableTip()
	var blocks []*block.Block
	var parent *block.Header
	for n := uint64(1); n <= tip.BlockNumber; n++ {
		blk, err := chain.BlockByNumber(n)
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
			closure, held, err := pipeline.Closure(pt)
			if err != nil || !held {
				return s, nil, fmt.Errorf("the closure certified by block %d is not held (%v)", n, err)
			}
			info, _, err := pipeline.DB().PointInfo(pt)
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
// firehose does (load.FundedKeys).
func loadPayers(fundsDir string, g *consensus.Genesis) ([]*payer, error) {
	funded, err := load.FundedKeys(fundsDir, g)
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
