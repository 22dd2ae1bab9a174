// Command leiosbench runs the benchmarks of ARCHITECTURE.md, "Benchmarks", and prints their
// tables, so that each component is measured side by side with its reference
// in one run. Each also writes the same figures to --json FILE; txcache,
// mempool, txsubmission, diffusion and sync draw their plots into --plots
// DIR, and throughput its plot to --plot FILE.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "leiosbench",
		Short:         "Benchmarks of the leiosnode components, side by side with their references",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newTxcacheCommand(), newMempoolCommand(), newTxSubmissionCommand(), newDiffusionCommand(), newVotesCommand(), newThroughputCommand(), newSyncCommand(), newBusyLoopCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "leiosbench:", err)
		os.Exit(1)
	}
}

// report is what every benchmark returns: printed as tables, and written
// as one indented JSON document with --json FILE.
type report interface{ write(io.Writer) }

// printReport prints r's tables and, if jsonPath is set, writes r there:
// the output of the benchmarks without a plots directory.
func printReport(cmd *cobra.Command, r report, jsonPath string) error {
	return outputFlags{json: jsonPath}.emit(cmd, r, nil)
}
