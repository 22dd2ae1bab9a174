// Command leiosbench runs the benchmarks of ARCHITECTURE.md, "Benchmarks", and prints their
// tables (or, with -json, one JSON document), so that each component is
// measured side by side with its reference in one run.
package main

import (
	"encoding/json"
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
	root.AddCommand(newTxcacheCommand(), newMempoolCommand(), newTxSubmissionCommand(), newDiffusionCommand(), newVotesCommand(), newThroughputCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "leiosbench:", err)
		os.Exit(1)
	}
}

// report is what every benchmark returns: printed as tables, or with
// --json as one indented JSON document.
type report interface{ write(io.Writer) }

func printReport(w io.Writer, r report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.write(w)
	return nil
}
