package main

import (
	"crypto/ed25519"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/keys/peerid"
)

func newPeerIDCommand() *cobra.Command {
	var keyFile string
	cmd := &cobra.Command{
		Use:   "peer-id --key node.skey",
		Short: "Print the libp2p peer ID of a node key, and the /p2p/ suffix other nodes' topologies name it by",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := keys.ReadSigningKey(keyFile, keys.Node)
			if err != nil {
				return err
			}
			id, err := peerid.Of(key.Public().(ed25519.PublicKey))
			if err != nil {
				return fmt.Errorf("%s: %w", keyFile, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n/p2p/%s\n", id, id)
			return nil
		},
	}
	cmd.Flags().StringVar(&keyFile, "key", "", "the node's key file, the config's nodeKeyFile (required)")
	_ = cmd.MarkFlagRequired("key") // only fails for an unknown flag
	return cmd
}
