package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/keys"
)

// txEnvelopeTypes are the cardano-cli text envelope types of a signed
// Conway tx (older cardano-cli versions say "Witnessed").
var txEnvelopeTypes = []string{"Tx ConwayEra", "Witnessed Tx ConwayEra"}

func newSubmitCommand() *cobra.Command {
	var nodeURL string
	cmd := &cobra.Command{
		Use:   "submit --node URL FILE",
		Short: "Submit a signed tx to a node's local API and print its tx id",
		Long: `Submit a signed tx to a node: POST URL/api/submit/tx with the tx's CBOR,
as cardano-submit-api takes it. FILE holds the tx as raw CBOR bytes or as a
cardano-cli text envelope ("type": "Tx ConwayEra", "cborHex": …). Prints the
tx id on admission; a tx the node rejects, or a full mempool, is an error
naming the node's reason.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := readTxFile(args[0])
			if err != nil {
				return err
			}
			id, err := apiclient.SubmitTx(cmd.Context(), &http.Client{}, nodeURL, raw)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	}
	cmd.Flags().StringVar(&nodeURL, "node", "", "base URL of the node's local HTTP API, e.g. http://127.0.0.1:3002 (required)")
	_ = cmd.MarkFlagRequired("node") // only fails for an unknown flag
	return cmd
}

// readTxFile reads a signed tx: the raw CBOR bytes, or a cardano-cli text
// envelope of a signed Conway tx (JSON starting with '{').
func readTxFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	// A CBOR tx is an array (major type 4): its first byte is never '{'.
	if text := bytes.TrimLeft(data, " \t\r\n"); len(text) == 0 || text[0] != '{' {
		return data, nil
	}
	env, err := keys.ParseEnvelope(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !isTxEnvelopeType(env.Type) {
		return nil, fmt.Errorf("%s: envelope type %q is not a signed tx (want %q)", path, env.Type, txEnvelopeTypes[0])
	}
	raw, err := hex.DecodeString(env.CborHex)
	if err != nil {
		return nil, fmt.Errorf("%s: cborHex: %w", path, err)
	}
	return raw, nil
}

func isTxEnvelopeType(t string) bool {
	for _, want := range txEnvelopeTypes {
		if t == want {
			return true
		}
	}
	return false
}
