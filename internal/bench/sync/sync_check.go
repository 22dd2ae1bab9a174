package sync

import (
	"errors"
	"log/slog"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leios"
)

// certifiedKept opens the databases of a synced node, stopped, and counts
// the certified EBs on its chain whose closure it holds: each one a next
// syncing node could fetch from it.
func certifiedKept(cfgFile string) (kept int, err error) {
	cfg, err := config.Load(cfgFile)
	if err != nil {
		return 0, err
	}
	g, err := consensus.ReadGenesis(cfg.GenesisFile)
	if err != nil {
		return 0, err
	}
	validator, err := consensus.NewValidator(g, nil)
	if err != nil {
		return 0, err
	}
	quiet := slog.New(slog.DiscardHandler)
	network := pebblestore.Network{Genesis: g.FileHash}
	chainDir, leiosDir := nodeDatabases(cfg)
	pipeline, err := leios.Open(leios.Options{
		Dir: leiosDir, Network: network, Limits: g.Leios.EBLimits(),
		Validator: validator, Ledger: g.ProtocolParams, Logger: quiet,
	})
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, pipeline.Close()) }()
	genesisUTxO, err := ledger.GenesisUTxO(g.InitialFunds)
	if err != nil {
		return 0, err
	}
	db, err := chaindb.Open(chainDir, chaindb.Options{
		K: g.SecurityParam, GenesisUTxO: genesisUTxO, Network: network,
		ApplyBlock: pipeline.ApplyBlock, ValidateBlock: validator.ValidateBlock, Logger: quiet,
	})
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	var parent *block.Header
	for n := uint64(1); n <= db.Tip().BlockNumber; n++ {
		blk, err := db.BlockByNumber(n)
		if err != nil {
			return 0, err
		}
		if pt, ok := consensus.CertifiedPoint(blk, parent); ok {
			if _, held, err := pipeline.Closure(pt); err != nil {
				return 0, err
			} else if held {
				kept++
			}
		}
		parent = blk.Header
	}
	return kept, nil
}
