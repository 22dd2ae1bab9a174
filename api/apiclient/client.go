package apiclient

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/ledger"
)

// submitTimeout bounds one POST /api/submit/tx. The node itself waits up to
// a few seconds for mempool room before it answers 503.
const submitTimeout = 15 * time.Second

// queryTimeout bounds one GET of a lookup (an output, a mempool entry, the
// parameters, a page of an address's outputs).
const queryTimeout = 5 * time.Second

// blocksTimeout bounds one GET /api/blocks: a page of a hundred blocks of
// thousands of txs each takes a while to serve and decode.
const blocksTimeout = 30 * time.Second

// The answers of POST /api/submit/tx that are not an admission.
var (
	// ErrTxRejected: 400, the tx broke a ledger rule (or did not decode);
	// the wrapping RejectedError holds the node's reason.
	ErrTxRejected = errors.New("tx rejected")
	// ErrRefused: 503, the node's edge refused the tx for now (it is
	// behind, or its mempool is full); the wrapping RefusedError holds
	// why and when to come back. The same tx may be submitted again then.
	ErrRefused = errors.New("tx refused for now")
)

// RefusedError is a 503 answer: Reason is the refusal's reason as the
// node names it ("queue-delay", "leios-behind", "mempool-full", ...),
// RetryAfter its Retry-After.
type RefusedError struct {
	Reason     string
	Message    string // the node's, whole
	RetryAfter time.Duration
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("tx refused for now: %s (retry after %v)", e.Message, e.RetryAfter)
}
func (e *RefusedError) Unwrap() error { return ErrRefused }

// refusalOf reads a 503 answer: the reason in the node's message
// ("refused (REASON): ..."; an older node's "mempool full" or "mempool
// busy") and its Retry-After, one second if absent.
func refusalOf(resp *http.Response, message string) *RefusedError {
	e := &RefusedError{Reason: "unavailable", Message: message, RetryAfter: time.Second}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	switch {
	case strings.HasPrefix(message, "refused ("):
		if end := strings.IndexByte(message, ')'); end > 0 {
			e.Reason = message[len("refused ("):end]
		}
	case strings.HasPrefix(message, "mempool full"):
		e.Reason = "mempool-full"
	case strings.HasPrefix(message, "mempool busy"):
		e.Reason = "mempool-busy"
	case strings.HasPrefix(message, "busy"):
		e.Reason = "api-busy"
	}
	return e
}

// RejectedError is a 400 answer: Reason is the node's error message,
// Rule the code of the rule the tx broke (apitypes.RuleInMempool for a tx the
// node already holds), "" when the node named none.
type RejectedError struct{ Reason, Rule string }

func (e *RejectedError) Error() string { return "tx rejected: " + e.Reason }
func (e *RejectedError) Unwrap() error { return ErrTxRejected }

// Held reports whether the node refused the tx because it holds it already.
func (e *RejectedError) Held() bool { return e.Rule == apitypes.RuleInMempool }

// RuleName is the wording of the ledger rule the tx broke, without the
// detail (which input, which amounts), so that rejections group by rule;
// an answer naming no ledger rule is its own reason.
func (e *RejectedError) RuleName() string {
	if rule, ok := ledger.RuleByCode(e.Rule); ok {
		return rule.Err().Error()
	}
	return e.Reason
}

// SubmitTx posts a signed tx (its CBOR) to the submit API of the node at
// nodeURL, e.g. http://127.0.0.1:3002, and returns the tx id the node
// answered with. A tx the node rejects, or a full mempool, is an error
// naming the node's reason.
func SubmitTx(ctx context.Context, client *http.Client, nodeURL string, tx []byte) (string, error) {
	return New(client, nodeURL).Submit(ctx, tx)
}

// statusTimeout bounds the GET /status of the status command: a node
// busy syncing may take a moment to answer, an operator waits no longer.
const statusTimeout = 10 * time.Second

// GetStatus decodes the GET /status of the node at nodeURL into v, for
// the status command; v is the caller's, so that it may read the answer
// of an older or newer node.
func GetStatus(ctx context.Context, client *http.Client, nodeURL string, v any) error {
	return New(client, nodeURL).Fetch(ctx, "/status", statusTimeout, v)
}

// NewHTTPClient is an HTTP client for many requests to a few nodes' APIs
// (a devnet's). It keeps idle connections for every submitter and poller
// of a node (the default transport keeps two a host, so at a thousand POSTs
// a second it would dial one per request and leave thousands in TIME_WAIT).
func NewHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, 64 // 0: no bound over all hosts
	return &http.Client{Transport: t}
}

// closeBody reads what is left of an answer before closing it, so that its
// connection goes back to the pool instead of being closed.
func closeBody(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 1<<16))
	body.Close()
}

// Client is a client of one node's local HTTP API. Its copies share what
// it learnt of the node.
type Client struct {
	client *http.Client
	base   string // e.g. http://127.0.0.1:3002, without a trailing slash
	// noBatch: the node has no POST /api/submit/txs (it is older than
	// this client); SubmitBatch posts each tx alone.
	noBatch *atomic.Bool
}

func New(client *http.Client, baseURL string) Client {
	return Client{client: client, base: strings.TrimRight(baseURL, "/"), noBatch: new(atomic.Bool)}
}

// Submit is POST /api/submit/tx. It returns the tx id the node answered
// with, or an error wrapping ErrTxRejected (a *RejectedError),
// ErrRefused (a *RefusedError), or why there was no answer.
func (a Client) Submit(ctx context.Context, raw []byte) (string, error) {
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
	defer closeBody(resp.Body)
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
		var answer struct {
			Rule string `json:"rule"`
		}
		_ = json.Unmarshal(body, &answer) // an answer without a rule names none
		return "", &RejectedError{Reason: apiErrorMessage(body), Rule: answer.Rule}
	case http.StatusServiceUnavailable:
		return "", refusalOf(resp, apiErrorMessage(body))
	}
	return "", fmt.Errorf("POST /api/submit/tx: %s: %s", resp.Status, apiErrorMessage(body))
}

// UnspentOutput is the answer of GET /api/utxo.
type UnspentOutput struct {
	Address string `json:"address"` // bech32
	Coin    uint64 `json:"coin"`
}

// UTxO is GET /api/utxo/{txid}/{index}: the output at in if it is unspent at
// the node's selected tip (ok), or ok=false if it is not.
func (a Client) UTxO(ctx context.Context, in ledger.TxIn) (out UnspentOutput, ok bool, err error) {
	path := fmt.Sprintf("/api/utxo/%s/%d", hex.EncodeToString(in.TxID[:]), in.Index)
	ok, err = a.Get(ctx, path, queryTimeout, &out)
	return out, ok, err
}

// InMempool is GET /api/mempool/{txid}: whether the tx with this tx id (of
// its body) is in the node's mempool.
func (a Client) InMempool(ctx context.Context, txID [32]byte) (bool, error) {
	var answer struct {
		Ticket uint64 `json:"ticket"`
	}
	return a.Get(ctx, "/api/mempool/"+hex.EncodeToString(txID[:]), queryTimeout, &answer)
}

// Get GETs path within timeout and decodes a 200 answer into v: found on
// 200, not found on 404, an error on anything else.
func (a Client) Get(ctx context.Context, path string, timeout time.Duration, v any) (found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return false, err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return false, err
	}
	defer closeBody(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			return false, fmt.Errorf("GET %s: %w", path, err)
		}
		return true, nil
	case http.StatusNotFound:
		// The API answers "not there" in JSON; a bare 404 is a node
		// without the route, which must not read as "not there".
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
			return false, nil
		}
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<12))
	return false, fmt.Errorf("GET %s: %s: %s", path, resp.Status, apiErrorMessage(body))
}

// Fetch is get of an answer that must be there: not found is an error too.
func (a Client) Fetch(ctx context.Context, path string, timeout time.Duration, v any) error {
	found, err := a.Get(ctx, path, timeout, v)
	if err == nil && !found {
		err = fmt.Errorf("GET %s: not found", path)
	}
	return err
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

// Blocks is GET /api/blocks?from=N&count=M: at most count blocks of the
// node's selected chain from number from, oldest first.
func (a Client) Blocks(ctx context.Context, from, count uint64) ([]apitypes.BlockTxs, error) {
	var blocks []apitypes.BlockTxs
	err := a.Fetch(ctx, fmt.Sprintf("/api/blocks?from=%d&count=%d", from, count), blocksTimeout, &blocks)
	return blocks, err
}

// Parameters is GET /api/parameters of the node at nodeURL: the protocol
// parameters its ledger applies.
func Parameters(ctx context.Context, client *http.Client, nodeURL string) (ledger.Params, error) {
	var p ledger.Params
	err := New(client, nodeURL).Fetch(ctx, "/api/parameters", queryTimeout, &p)
	return p, err
}

// NetworkParameters is GET /api/parameters of the node at nodeURL whole:
// the protocol parameters, and the slot length, f and Leios limits of its
// network when it gives them (a node older than this client does not:
// their fields are then zero).
func NetworkParameters(ctx context.Context, client *http.Client, nodeURL string) (apitypes.Parameters, error) {
	var p apitypes.Parameters
	err := New(client, nodeURL).Fetch(ctx, "/api/parameters", queryTimeout, &p)
	return p, err
}

// maxUTxOPages bounds the pages AddressUTxOs reads: 10,000 outputs, far
// more inputs than a tx can hold.
const maxUTxOPages = 100

// AddressUTxOs is GET /api/addresses/{address}/utxos of the node at
// nodeURL, page after page: the outputs the address holds at the node's
// tip (at most maxUTxOPages pages of them). The tip may move between two
// pages; an output listed twice is returned once.
func AddressUTxOs(ctx context.Context, client *http.Client, nodeURL string, address []byte) ([]apitypes.AddressUTxO, error) {
	a := New(client, nodeURL)
	seen := map[string]bool{}
	var all []apitypes.AddressUTxO
	for page := 1; page <= maxUTxOPages; page++ {
		var got []apitypes.AddressUTxO
		path := fmt.Sprintf("/api/addresses/%s/utxos?count=%d&page=%d", ledger.FormatAddress(address), apitypes.MaxUTxOsPerPage, page)
		if err := a.Fetch(ctx, path, queryTimeout, &got); err != nil {
			return nil, err
		}
		for _, u := range got {
			if key := fmt.Sprintf("%s#%d", u.TxHash, u.OutputIndex); !seen[key] {
				seen[key] = true
				all = append(all, u)
			}
		}
		if len(got) < apitypes.MaxUTxOsPerPage {
			break
		}
	}
	return all, nil
}

// SpendingInput is the input that spends u, an output AddressUTxOs listed.
func SpendingInput(u apitypes.AddressUTxO) (ledger.TxIn, error) {
	id, err := u.TxID()
	if err != nil {
		return ledger.TxIn{}, err
	}
	return ledger.TxIn{TxID: id, Index: u.OutputIndex}, nil
}
