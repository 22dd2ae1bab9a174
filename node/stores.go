package node

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// networkOf is what the databases are stamped with: the genesis file's hash,
// and for people where that file was and when the network started.
func networkOf(cfg *config.Config, g *consensus.Genesis) pebblestore.Network {
	return pebblestore.Network{
		Genesis: g.FileHash,
		About:   fmt.Sprintf("%s, system start %s", cfg.GenesisFile, g.SystemStart.UTC().Format(time.RFC3339)),
	}
}

// CertifiedClosures is the StoreCheck.Store of CheckStores' last check:
// whether the LeiosDB holds every closure the chain certifies.
const CertifiedClosures = "certified closures"

// StoreCheck is what CheckStores found in one database.
type StoreCheck struct {
	Store string // "chain database", "LeiosDB"
	Dir   string
	Err   error // nil if the database passed; else what is wrong and what to do
	// Absent: the directory does not exist or is empty. The node creates
	// the store empty at start and fills it from its peers (a chain by
	// chain sync, a LeiosDB deleted on its own by LeiosFetch).
	Absent bool
	// Certified and Missing, in the "certified closures" check: the EBs the
	// chain certifies, and those whose closure the LeiosDB does not hold.
	Certified, Missing int
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
	checks := []StoreCheck{
		checkStore("chain database", cfg.ChainDBDir(), func(dir string) error { return chaindb.Check(dir, chain) }),
		checkStore("LeiosDB", cfg.LeiosDBDir(), func(dir string) error { return leiosdb.Check(dir, leios) }),
	}
	if !checks[0].Absent && checks[0].Err == nil && checks[1].Err == nil {
		checks = append(checks, checkCertified(cfg, chain, leios))
	}
	return checks, nil
}

// checkStore checks the store in dir with check, unless dir holds none:
// then it is Absent, which is no fault, as the node creates it at start.
func checkStore(store, dir string, check func(dir string) error) StoreCheck {
	c := StoreCheck{Store: store, Dir: dir}
	if absent, err := pebblestore.Absent(nil, dir); err == nil && absent {
		c.Absent = true
		return c
	}
	c.Err = check(dir) // it says what is wrong with a dir it cannot list
	return c
}

// checkCertified compares the EBs the chain certifies with the closures the
// LeiosDB holds: one it lost (deleted, or its newest WAL cut) is refilled
// from peers when the node starts, and cannot be served until then.
func checkCertified(cfg *config.Config, chain chaindb.Options, leios leiosdb.Options) StoreCheck {
	check := StoreCheck{Store: CertifiedClosures, Dir: cfg.LeiosDBDir()}
	certified, err := chaindb.CertifiedEBs(cfg.ChainDBDir(), chain)
	if err != nil {
		check.Err = err
		return check
	}
	missing := certified
	if absent, err := pebblestore.Absent(nil, cfg.LeiosDBDir()); err == nil && !absent {
		if missing, err = leiosdb.MissingClosures(cfg.LeiosDBDir(), leios, certified); err != nil {
			check.Err = err
			return check
		}
	}
	check.Certified, check.Missing = len(certified), len(missing)
	if len(missing) > 0 {
		check.Err = fmt.Errorf("%d of the %d certified closures the chain applied are missing from the LeiosDB (the first at %s): start the node with peers that hold them and it fetches them again; until then it cannot serve those blocks to syncing peers",
			len(missing), len(certified), missing[0])
	}
	return check
}
