package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/keys"
)

// submitTimeout bounds one POST /api/submit/tx. The node itself waits up to
// a few seconds for mempool room before it answers 503.
const submitTimeout = 15 * time.Second

// The answers of POST /api/submit/tx that are not an admission.
var (
	// errTxRejected: 400, the tx broke a ledger rule (or did not decode);
	// the wrapping txRejectedError holds the node's reason.
	errTxRejected = errors.New("tx rejected")
	// errMempoolFull: 503, the mempool had no room in time; the same tx
	// may be submitted again later.
	errMempoolFull = errors.New("mempool full")
)

// txRejectedError is a 400 answer: Reason is the node's error message.
type txRejectedError struct{ Reason string }

func (e *txRejectedError) Error() string { return "tx rejected: " + e.Reason }
func (e *txRejectedError) Unwrap() error { return errTxRejected }

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
			id, err := newNodeAPI(&http.Client{}, nodeURL).submit(cmd.Context(), raw)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	}
	cmd.Flags().StringVar(&nodeURL, "node", "", "base URL of the node's local HTTP API, e.g. http://127.0.0.1:3001 (required)")
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

// nodeAPI is a client of one node's local HTTP API.
type nodeAPI struct {
	client *http.Client
	base   string // e.g. http://127.0.0.1:3001, without a trailing slash
}

func newNodeAPI(client *http.Client, baseURL string) nodeAPI {
	return nodeAPI{client: client, base: strings.TrimRight(baseURL, "/")}
}

// submit is POST /api/submit/tx. It returns the tx id the node answered
// with, or an error wrapping errTxRejected (a *txRejectedError),
// errMempoolFull, or why there was no answer.
func (a nodeAPI) submit(ctx context.Context, raw []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, submitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/api/submit/tx", bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/cbor")
	resp, err := a.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return "", fmt.Errorf("POST /api/submit/tx: reading the answer: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusAccepted:
		var id string
		if err := json.Unmarshal(body, &id); err != nil {
			return "", fmt.Errorf("POST /api/submit/tx: the tx id: %w", err)
		}
		return id, nil
	case http.StatusBadRequest:
		return "", &txRejectedError{Reason: apiErrorMessage(body)}
	case http.StatusServiceUnavailable:
		return "", errMempoolFull
	}
	return "", fmt.Errorf("POST /api/submit/tx: %s: %s", resp.Status, apiErrorMessage(body))
}

// apiErrorMessage is the "error" of a JSON error answer, or the body itself
// when it is not one.
func apiErrorMessage(body []byte) string {
	var answer struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err == nil && answer.Error != "" {
		return answer.Error
	}
	return strings.TrimSpace(string(body))
}
