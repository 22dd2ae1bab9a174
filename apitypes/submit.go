package apitypes

// RuleInMempool is the "rule" of a 400 answer to a submit of a tx the
// mempool already holds; a ledger rule's failure has the rule's code
// (ledger.Rule.Code) instead.
const RuleInMempool = "in-mempool"

// The reasons of a tx's 503 within a batch (TxAnswer.Reason), as the
// single submit's messages name them.
const (
	ReasonMempoolFull = "mempool-full"
	ReasonMempoolBusy = "mempool-busy"
)

// TxAnswer is the answer to one tx of POST /api/submit/txs: what POST
// /api/submit/tx would have answered for it alone, in a field each.
type TxAnswer struct {
	// Status is the tx's own status: 202 admitted, 400 rejected (Rule
	// says by what, as the single submit's 400), 413 larger than the max
	// tx size, 503 refused for now (Reason, RetryAfter), 500 a local
	// failure.
	Status int    `json:"status"`
	ID     string `json:"id,omitempty"` // 202: the tx id, hex
	Error  string `json:"error,omitempty"`
	// Rule is a 400's rule code: ledger.Rule.Code, or RuleInMempool.
	Rule string `json:"rule,omitempty"`
	// Reason and RetryAfter (seconds) are a 503's: ReasonMempoolFull or
	// ReasonMempoolBusy.
	Reason     string `json:"reason,omitempty"`
	RetryAfter int    `json:"retryAfter,omitempty"`
}

// Defaults of the bounds of POST /api/submit/txs (the server's
// Options.MaxBatchTxs and MaxBatchBytes), which clients size their batches
// by. A batch of DefaultMaxBatchBytes is in within the server's upload
// grace + 4 s at its minimum upload rate, well inside its read timeout; it
// holds some 330 plain payments, or four txs of the max size.
const (
	DefaultMaxBatchTxs   = 256
	DefaultMaxBatchBytes = 64<<10 + 16 // the array's head beside four 16 KiB txs
)
