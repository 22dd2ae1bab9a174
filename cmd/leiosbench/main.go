// Command leiosbench runs the benchmarks of ARCHITECTURE.md, "Benchmarks", and prints their
// tables, so that each component is measured side by side with its reference
// in one run. Each also writes the same figures to --json FILE; txcache,
// mempool, txsubmission, diffusion and sync draw their plots into --plots
// DIR, and throughput its plot to --plot FILE.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/bench/diffusion"
	"github.com/leiosnode/leiosnode/lab/bench/mempool"
	"github.com/leiosnode/leiosnode/lab/bench/sync"
	"github.com/leiosnode/leiosnode/lab/bench/throughput"
	"github.com/leiosnode/leiosnode/lab/bench/txcache"
	"github.com/leiosnode/leiosnode/lab/bench/txsubmission"
	"github.com/leiosnode/leiosnode/lab/bench/votes"
)

func main() {
	root := &cobra.Command{
		Use:           "leiosbench",
		Short:         "Benchmarks of the leiosnode components, side by side with their references",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(txcache.NewCommand(), mempool.NewCommand(), txsubmission.NewCommand(), diffusion.NewCommand(), votes.NewCommand(), throughput.NewCommand(), sync.NewCommand(), throughput.NewBusyLoopCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "leiosbench:", err)
		os.Exit(1)
	}
}
