package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/internal/logging"
	"github.com/leiosnode/leiosnode/node"
)

func newRunCommand() *cobra.Command {
	var configFile string
	var opts node.Options
	cmd := &cobra.Command{
		Use:   "run --config FILE",
		Short: "Run one node until SIGINT or SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNode(cmd.Context(), configFile, opts, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "the node's config.json (required)")
	cmd.Flags().BoolVar(&opts.AcceptLostImmutableTip, "accept-lost-immutable-tip", false,
		"open a chain database whose immutable-tip marker file is gone, taking its stored immutable tip as final: "+
			"final blocks past it that its write-ahead log lost stay lost")
	cmd.Flags().StringVar(&opts.TraceFile, "trace", "",
		"write the node's events to FILE in the Leios simulators' trace format (JSON lines; overrides the config's traceFile)")
	// The devnet's chaos mode only: never on a network that matters.
	cmd.Flags().BoolVar(&opts.Equivocate, "chaos-equivocate", false,
		"devnet chaos: this pool announces a second EB for each slot it leads with one (forge.Options.Equivocate)")
	_ = cmd.Flags().MarkHidden("chaos-equivocate")
	_ = cmd.MarkFlagRequired("config") // only fails for an unknown flag
	return cmd
}

// runNode runs the node of configFile, with opts, until ctx is cancelled
// or SIGINT or SIGTERM, logging to logOut. A node that cannot start is an
// error; a stopped one is not. The signals are caught only once the node is
// built: while its databases open they end the process at once, as they do
// by default — the stores are consistent on disk at every point, and an
// open Pebble cannot finish (a disk still full) must not hold the process.
func runNode(ctx context.Context, configFile string, opts node.Options, logOut io.Writer) error {
	cfg, err := config.Load(configFile)
	if err != nil {
		return err
	}
	logger := logging.New(logOut, cfg.Level())
	opts.Logger = logger
	n, err := node.New(cfg, opts)
	if err != nil {
		return fmt.Errorf("starting the node: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("node running", "config", configFile, "pid", os.Getpid())
	err = n.Run(ctx)
	if err != nil && !(errors.Is(err, context.Canceled) && ctx.Err() != nil) {
		return fmt.Errorf("node: %w", err)
	}
	logger.Info("node stopped")
	return nil
}
