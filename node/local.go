package node

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/mempool"
)

// LocalOptions are what OpenLocal takes besides the node's config.
type LocalOptions struct {
	// Pools are configs of stake pools whose keys forge and vote on this
	// node's chain, one forger each (the node's own config among them if it
	// is a pool's). None: a node that only takes blocks in.
	Pools []*config.Config
	// Now is the clock the parts read, as in Options. Default time.Now.
	Now func() time.Time
	// Logger receives the parts' logs. Default: discarded.
	Logger *slog.Logger
}

// Local is a node's databases, Leios pipeline and mempool, and the forgers
// of LocalOptions.Pools, wired exactly as New wires them, with no network,
// API or loops of their own: the caller drives the forgers slot by slot
// (ForgeSlot, VoteSlot) on a clock it owns, or adds blocks to the chain.
// For benchmarks that forge a chain on virtual time, or measure how fast
// a node applies one.
type Local struct {
	parts
	forgers []*forge.Forger
}

// OpenLocal opens cfg's databases and builds the parts and forgers.
func OpenLocal(cfg *config.Config, opts LocalOptions) (*Local, error) {
	l := &Local{parts: parts{log: opts.Logger}}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if err := l.open(cfg, now, opts.Pools); err != nil {
		_ = l.parts.close() // the open error is the one to report
		return nil, err
	}
	return l, nil
}

func (l *Local) open(cfg *config.Config, now func() time.Time, pools []*config.Config) (err error) {
	if l.genesis, err = consensus.ReadGenesis(cfg.GenesisFile); err != nil {
		return err
	}
	if l.validator, err = consensus.NewValidator(l.genesis, now); err != nil {
		return fmt.Errorf("genesis %s: %w", cfg.GenesisFile, err)
	}
	// Every pool's keys are read before a database opens, as New reads its
	// own.
	var producers []*producer
	for _, pool := range pools {
		pr, err := readProducer(pool, l.validator)
		if err != nil {
			return err
		}
		if pr == nil {
			return fmt.Errorf("config %s: no issuerSigningKeyFile: not a pool's config", pool.Path)
		}
		producers = append(producers, pr)
	}
	if err = l.parts.open(cfg, partsOptions{now: now, log: l.log, registerer: prometheus.NewRegistry()}); err != nil {
		return err
	}
	for _, pr := range producers {
		fg, err := l.newForger(pr, nil, false, nil) // several pools: no one registry for their counts
		if err != nil {
			return err
		}
		l.forgers = append(l.forgers, fg)
	}
	return nil
}

// Chain is the node's chain database.
func (l *Local) Chain() *chaindb.DB { return l.chain }

// Leios is the node's Leios pipeline.
func (l *Local) Leios() *leios.Pipeline { return l.leios }

// Mempool is the node's mempool.
func (l *Local) Mempool() *mempool.Mempool { return l.mempool }

// Forgers are the pools' forgers, in LocalOptions.Pools' order.
func (l *Local) Forgers() []*forge.Forger { return l.forgers }

// Run runs the pipeline's loops — offers, the promotion of certified EBs
// and pruning as the immutable tip advances — until ctx is cancelled. The
// mempool follows the chain when the caller syncs it (Mempool().Sync), so
// a forged chain does not depend on when a loop ran.
func (l *Local) Run(ctx context.Context) error { return l.leios.Run(ctx) }

// Close closes the databases; Run must have returned.
func (l *Local) Close() error { return l.parts.close() }
