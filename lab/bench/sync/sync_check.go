package sync

import (
	"log/slog"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/node"
)

// certifiedKept checks the databases of a synced node, stopped, as
// leiosnode db check does, and counts the certified EBs on its chain whose
// closure it holds: each one a next syncing node could fetch from it.
func certifiedKept(cfgFile string) (int, error) {
	cfg, err := config.Load(cfgFile)
	if err != nil {
		return 0, err
	}
	checks, err := node.CheckStores(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return 0, err
	}
	kept := 0
	for _, c := range checks {
		switch {
		case c.Store == node.CertifiedClosures:
			kept = c.Certified - c.Missing
		case c.Err != nil:
			return 0, c.Err
		}
	}
	return kept, nil
}
