package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/internal/logging"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/node"
)

func newDBCommand() *cobra.Command {
	db := &cobra.Command{
		Use:   "db",
		Short: "Look after a node's databases",
	}
	db.AddCommand(newDBCheckCommand())
	return db
}

func newDBCheckCommand() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "check --config FILE",
		Short: "Verify each of a stopped node's databases, and say what to do about one that fails",
		Long: `Check what the node checks before it opens its databases (the genesis, the
keys and topology the config names, that its addresses are free), then verify
each of its databases without writing to them: Pebble's checks of every table
and its checksums, then each store's own (the chain linked from block 1 to its
tip through the immutable tip; the LeiosDB's counts and references), and that
the LeiosDB holds every closure the chain certifies. The node must be stopped:
a running node holds its databases' locks and its addresses.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(configFile)
			if err != nil {
				return err
			}
			// What the node checks before its databases: a node whose
			// stores are sound may still be refused at start.
			failed := 0
			if err := node.CheckConfig(cfg); err != nil {
				fmt.Fprintln(cmd.OutOrStdout(), err) // it names the file or setting
				failed++
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "config %s: ok (genesis, keys, topology, free addresses)\n", cfg.Path)
			}
			logger := logging.New(cmd.ErrOrStderr(), slog.LevelWarn)
			checks, err := node.CheckStores(cfg, logger)
			if err != nil {
				return err
			}
			for _, c := range checks {
				switch e, ok := errors.AsType[*pebblestore.Error](c.Err); {
				case c.Absent:
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s: absent; created empty at start, synced from peers\n", c.Store, c.Dir)
				case c.Err == nil:
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s: ok\n", c.Store, c.Dir)
				case ok:
					fmt.Fprintln(cmd.OutOrStdout(), e)
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %v\n", c.Store, c.Dir, c.Err)
				}
				if c.Err != nil {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d checks failed", failed, 1+len(checks))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "the node's config.json (required)")
	_ = cmd.MarkFlagRequired("config") // only fails for an unknown flag
	return cmd
}
