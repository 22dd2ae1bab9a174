package node

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// The databases live side by side in the config's databasePath.
func chainDir(cfg *config.Config) string { return filepath.Join(cfg.DatabasePath, "chain") }
func leiosDir(cfg *config.Config) string { return filepath.Join(cfg.DatabasePath, "leios") }

// networkOf is what the databases are stamped with: the genesis file's hash,
// and for people where that file was and when the network started.
func networkOf(cfg *config.Config, g *consensus.Genesis) pebblestore.Network {
	return pebblestore.Network{
		Genesis: g.FileHash,
		About:   fmt.Sprintf("%s, system start %s", cfg.GenesisFile, g.SystemStart.UTC().Format(time.RFC3339)),
	}
}

// StoreCheck is what CheckStores found in one database.
type StoreCheck struct {
	Store string // "chain database", "LeiosDB"
	Dir   string
	Err   error // nil if the database passed; else what is wrong and what to do
}

// CheckStores verifies the node's databases without writing to them
// (chaindb.Check, leiosdb.Check), each on its own, for leiosnode db check.
// It fails only if the config's genesis cannot be read: the databases are
// checked against it.
func CheckStores(cfg *config.Config, logger *slog.Logger) ([]StoreCheck, error) {
	g, err := consensus.ReadGenesis(cfg.GenesisFile)
	if err != nil {
		return nil, err
	}
	validator, err := consensus.NewValidator(g, nil)
	if err != nil {
		return nil, fmt.Errorf("genesis %s: %w", cfg.GenesisFile, err)
	}
	chain := chaindb.Options{K: g.SecurityParam, Network: networkOf(cfg, g), ValidateBlock: validator.ValidateBlock, Logger: logger}
	leios := leiosdb.Options{Limits: g.Leios.EBLimits(), Network: networkOf(cfg, g), Logger: logger}
	return []StoreCheck{
		{Store: "chain database", Dir: chainDir(cfg), Err: chaindb.Check(chainDir(cfg), chain)},
		{Store: "LeiosDB", Dir: leiosDir(cfg), Err: leiosdb.Check(leiosDir(cfg), leios)},
	}, nil
}
