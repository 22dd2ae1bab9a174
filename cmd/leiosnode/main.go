package main

import (
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		os.Exit(1) // cobra has printed the error
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:          "leiosnode",
		Short:        "A prototype Ouroboros Leios node",
		SilenceUsage: true, // a failing node is not a usage error
	}
	root.AddCommand(newRunCommand(), newGenesisCommand(), newDevnetCommand(), newKeygenCommand(), newPeerIDCommand(),
		newSubmitCommand(), newTxCommand(), newLoadCommand(), newStatusCommand(), newDBCommand(), newVersionCommand())
	return root
}
