package main

import (
	"cmp"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
)

// txRequestTimeout bounds each request tx send makes of the node.
const txRequestTimeout = 30 * time.Second

func newTxCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tx",
		Short: "Build, sign and send txs through a node's local API",
	}
	cmd.AddCommand(newTxSendCommand())
	return cmd
}

func newTxSendCommand() *cobra.Command {
	var (
		skeyPath, to, nodeURL string
		amount                uint64
	)
	cmd := &cobra.Command{
		Use:   "send --skey FILE --to ADDR --amount N --node URL",
		Short: "Pay N lovelace from a payment key's address and print the tx id",
		Long: `Pay --amount lovelace to --to from the enterprise address of the payment
key --skey, through the node at --node, and print the tx id:
  1. the node's protocol parameters (GET /api/parameters) give the fee, the
     output minimum and the network id of the key's address;
  2. the address's outputs at the node's tip
     (GET /api/addresses/{address}/utxos) are spent largest first, as few
     as pay the amount, the fee and a change output back to the address;
  3. the signed tx is submitted (POST /api/submit/tx).
--to is an address, bech32 or hex, or an address file such as the .addr
files keygen and genesis write. Outputs a tx still in the mempool spends
are not known to the endpoint: send again once it is in a block.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := keys.ReadSigningKey(skeyPath, keys.Payment)
			if err != nil {
				return fmt.Errorf("--skey: %w", err)
			}
			toAddress, err := recipient(to)
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			client := &http.Client{Timeout: txRequestTimeout}
			ctx := cmd.Context()
			params, err := apiclient.Parameters(ctx, client, nodeURL)
			if err != nil {
				return unreachable(nodeURL, err)
			}
			if n := ledger.AddressNetwork(toAddress); n != params.NetworkID {
				return fmt.Errorf("--to: address on network %d, the node's network is %d", n, params.NetworkID)
			}
			from := ledger.EnterpriseAddress(params.NetworkID, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
			listed, err := apiclient.AddressUTxOs(ctx, client, nodeURL, from)
			if err != nil {
				return unreachable(nodeURL, err)
			}
			funds := make([]fund, len(listed))
			for i, u := range listed {
				if funds[i].in, err = apiclient.SpendingInput(u); err != nil {
					return fmt.Errorf("the node's answer: %w", err)
				}
				if funds[i].coin, err = u.Lovelace(); err != nil {
					return fmt.Errorf("the node's answer: %w", err)
				}
			}
			tx, err := buildSend(params, key, from, funds, toAddress, amount)
			if err != nil {
				return err
			}
			id, err := apiclient.SubmitTx(ctx, client, nodeURL, tx.Bytes())
			if err != nil {
				return unreachable(nodeURL, err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&skeyPath, "skey", "", "payment signing key file (required)")
	fs.StringVar(&to, "to", "", "address to pay, bech32 or hex, or an address file (required)")
	fs.Uint64Var(&amount, "amount", 0, "lovelace to pay (required)")
	fs.StringVar(&nodeURL, "node", "", "base URL of the node's local HTTP API, e.g. http://127.0.0.1:3002 (required)")
	for _, name := range []string{"skey", "to", "amount", "node"} {
		_ = cmd.MarkFlagRequired(name) // only fails for an unknown flag
	}
	return cmd
}

// recipient reads --to: an address, or else the file of one.
func recipient(to string) ([]byte, error) {
	addr, err := ledger.ParseAddress(to)
	if err == nil {
		return addr, nil
	}
	if info, statErr := os.Stat(to); statErr == nil && info.Mode().IsRegular() {
		return keys.ReadAddressFile(to)
	}
	return nil, err
}

// unreachable says so when err is the node not answering at all.
func unreachable(nodeURL string, err error) error {
	var transport *url.Error
	if errors.As(err, &transport) {
		return fmt.Errorf("node unreachable at %s: %w", nodeURL, transport.Err)
	}
	return err
}

// fund is an output the sender holds.
type fund struct {
	in   ledger.TxIn
	coin uint64
}

// errInsufficientFunds: the sender's outputs cannot pay the amount, the fee
// and the change output.
var errInsufficientFunds = errors.New("insufficient funds")

// buildSend builds and signs the tx paying amount to to from funds, the
// outputs at from that key spends: largest first, as few as pay the amount,
// the fee and a change output of at least the minimum back to from
// (ledger.BuildPayment balances each try).
func buildSend(p ledger.Params, key ed25519.PrivateKey, from []byte, funds []fund, to []byte, amount uint64) (*ledger.Tx, error) {
	if least := ledger.MinOutputCoin(p, to); amount < least {
		return nil, fmt.Errorf("--amount %d is below the least an output to that address carries, %d lovelace", amount, least)
	}
	funds = slices.Clone(funds)
	slices.SortFunc(funds, func(a, b fund) int { return cmp.Compare(b.coin, a.coin) })
	pay := []ledger.TxOut{{Address: to, Coin: amount}}
	signers := []ed25519.PrivateKey{key}
	var inputs []ledger.TxIn
	var total uint64
	for _, f := range funds {
		inputs, total = append(inputs, f.in), total+f.coin
		tx, err := ledger.BuildPayment(p, inputs, total, pay, from, nil, signers)
		if errors.Is(err, ledger.ErrCannotBalance) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if uint64(tx.Size()) > p.MaxTxSize {
			return nil, fmt.Errorf("paying %d lovelace takes %d of the address's outputs, a tx of %d bytes, over the max tx size %d: pay in parts",
				amount, len(inputs), tx.Size(), p.MaxTxSize)
		}
		return tx, nil
	}
	// What it would take: the amount, the fee of a tx spending every
	// output, and the least change.
	body := ledger.TxBody{Inputs: inputs, Outputs: append(pay, ledger.TxOut{Address: from, Coin: total})}
	fee, err := body.MinFee(p, len(signers))
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %s holds %d lovelace in %d outputs at the node's tip; paying %d takes about %d more for the fee and at least %d for the change output",
		errInsufficientFunds, ledger.FormatAddress(from), total, len(funds), amount, fee, ledger.MinOutputCoin(p, from))
}
