package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/load"
)

// txSizeUsage is the usage of --tx-size, for load and devnet.
const txSizeUsage = "sizes of the txs, padded with metadata: N bytes each, MIN-MAX log-uniform between (e.g. 200-16384), " +
	"or large (200-16384, a mean of 3,673 B) (default: plain payments of some 191 B)"

// txSizeFlag reads --tx-size, given as spec: the zero TxSize (plain
// payments) when the flag was not given.
func txSizeFlag(cmd *cobra.Command, spec string) (load.TxSize, error) {
	if !cmd.Flags().Changed("tx-size") {
		return load.TxSize{}, nil
	}
	sizes, err := load.ParseTxSize(spec)
	if err != nil {
		return load.TxSize{}, fmt.Errorf("--tx-size: %w", err)
	}
	return sizes, nil
}
