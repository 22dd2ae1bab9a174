package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

func newGenesisAddCommand() *cobra.Command {
	var (
		dir, host string
		pool      bool
	)
	cmd := &cobra.Command{
		Use:   "add --dir NETWORK --host ADDR [--relay | --pool]",
		Short: "Add a relay to a network genesis wrote",
		Long: `Add a node to the network in NETWORK (a directory leiosnode genesis wrote):
NETWORK/relay-j/ with a new node key, config.json listening on ADDR (the
forms of genesis --hosts; its HTTP API on the next port) and a topology
naming the network's first pool, from which peer sharing finds it the
others. No other node's files change, and none restarts.

A pool cannot be added: it is part of the genesis (its stake, VRF and BLS
keys), and every node's databases belong to the genesis they started on,
so a network with one pool more is a new network (--pool says so).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pool {
				return layout.ErrPoolNeedsGenesis
			}
			added, err := layout.AddRelay(dir, host)
			if err != nil {
				return err
			}
			printAdded(cmd.OutOrStdout(), added)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&dir, "dir", "", "the network's directory, as genesis --dir wrote it (required)")
	fs.StringVar(&host, "host", "", "where the new node listens: host:port, a bare host or a multiaddr, as genesis --hosts takes them (required)")
	fs.Bool("relay", true, "add a relay: a node without pool keys (the default, and the only kind that can be added)")
	fs.BoolVar(&pool, "pool", false, "add a pool: refused, with why")
	cmd.MarkFlagsMutuallyExclusive("relay", "pool")
	_ = cmd.MarkFlagRequired("dir") // only fail for an unknown flag
	_ = cmd.MarkFlagRequired("host")
	return cmd
}

// printAdded says what genesis add wrote and what the operator does next.
func printAdded(w io.Writer, a *layout.Added) {
	fmt.Fprintf(w, "%s in %s: listens on %s, API %s\n", a.Name, a.Dir, a.P2PAddr(), a.APIURL())
	if a.PoolsShare {
		fmt.Fprintf(w, "  it dials the first pool, %s, and finds the other nodes by peer sharing\n", a.Bootstrap)
	} else {
		fmt.Fprintf(w, "  it dials the first pool, %s; this network's pools do not share peers (it was written without relays), so it knows that pool only\n", a.Bootstrap)
	}
	if a.OnHosts {
		fmt.Fprintf(w, "copy %s whole to its host, and there run: leiosnode run --config config.json\n", a.Dir)
	} else {
		fmt.Fprintf(w, "start it with: leiosnode run --config %s\n", a.ConfigFile)
	}
	fmt.Fprintln(w, "no other node needs a change or a restart")
}
