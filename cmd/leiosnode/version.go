package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/internal/version"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print leiosnode's version",
		Long: `Print "leiosnode <version>": the version set at link time
(-ldflags "-X github.com/leiosnode/leiosnode/internal/version.Version=…"),
else the one Go stamped into the binary (a tag, or the commit of a git
checkout). The node announces the same to its peers as its libp2p agent,
leiosnode/<version>.`,
		Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "leiosnode", version.String())
		},
	}
}
