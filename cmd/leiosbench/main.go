// Command leiosbench runs the benchmarks of DESIGN §6 and prints their
// tables (or, with -json, one JSON document), so that each component is
// measured side by side with its reference in one run.
package main

import (
	"fmt"
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
	root.AddCommand(newTxcacheCommand(), newMempoolCommand(), newDiffusionCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "leiosbench:", err)
		os.Exit(1)
	}
}
