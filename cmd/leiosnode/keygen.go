package main

import (
	"encoding/hex"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/keys/peerid"
	"github.com/leiosnode/leiosnode/ledger"
)

func newKeygenCommand() *cobra.Command {
	var (
		kind      string
		prefix    string
		networkID uint8
	)
	cmd := &cobra.Command{
		Use:   "keygen --kind node|pool|vrf|bls|payment --out PREFIX",
		Short: "Write a new key as PREFIX.skey (and PREFIX.vkey, PREFIX.addr)",
		Long: `Write a new key as Cardano text envelope files:
  node     PREFIX.skey: the key of a node's libp2p identity; prints its peer ID
  pool     PREFIX.skey, PREFIX.vkey: a pool's cold (issuer) key; prints the vkey hex
  vrf      PREFIX.skey, PREFIX.vkey: a pool's VRF key; prints the vkey hex
  bls      PREFIX.skey, PREFIX.vkey: a pool's BLS voting key; prints the
           "blsVKey" and "blsPoP" (proof of possession) lines of its
           genesis pool entry
  payment  PREFIX.skey, PREFIX.vkey, PREFIX.addr: a payment key and its
           enterprise address (bech32, as cardano-cli writes it); prints it
Existing files are never overwritten.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, ext := range []string{".skey", ".vkey", ".addr"} {
				if _, err := os.Stat(prefix + ext); err == nil {
					return fmt.Errorf("%s%s exists; not overwriting a key", prefix, ext)
				}
			}
			out := cmd.OutOrStdout()
			switch kind {
			case "node":
				vkey, err := keys.GenerateKeyFiles(keys.Node, prefix+".skey", "")
				if err != nil {
					return err
				}
				id, err := peerid.Of(vkey)
				if err != nil {
					return err
				}
				fmt.Fprintln(out, id)
			case "pool":
				vkey, err := keys.GenerateKeyFiles(keys.StakePool, prefix+".skey", prefix+".vkey")
				if err != nil {
					return err
				}
				fmt.Fprintln(out, hex.EncodeToString(vkey))
			case "vrf":
				vkey, err := keys.GenerateVRFKeyFiles(prefix+".skey", prefix+".vkey")
				if err != nil {
					return err
				}
				fmt.Fprintln(out, hex.EncodeToString(vkey[:]))
			case "bls":
				vkey, proof, err := keys.GenerateBLSKeyFiles(prefix+".skey", prefix+".vkey")
				if err != nil {
					return err
				}
				vkeyBytes, proofBytes := vkey.Bytes(), proof.Bytes()
				fmt.Fprintf(out, "\"blsVKey\": %q,\n\"blsPoP\": %q\n", hex.EncodeToString(vkeyBytes[:]), hex.EncodeToString(proofBytes[:]))
			case "payment":
				addr, err := keys.GeneratePaymentKeyFiles(prefix, networkID)
				if err != nil {
					return err
				}
				fmt.Fprintln(out, ledger.FormatAddress(addr))
			default:
				return fmt.Errorf("--kind %q: want node, pool, vrf, bls or payment", kind)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&kind, "kind", "", "node, pool, vrf, bls or payment (required)")
	fs.StringVar(&prefix, "out", "", "path prefix of the files to write (required)")
	fs.Uint8Var(&networkID, "network-id", 0, "network id of a payment address")
	_ = cmd.MarkFlagRequired("kind") // only fails for an unknown flag
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
