package txsubmission

import (
	"context"
	"time"

	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// MaxUnackedLimit bounds Options.MaxUnackedTxIds, so that a reply of that
// many ids always fits the small message limit.
const MaxUnackedLimit = 1000

// maxRequestBytesLimit bounds Options.MaxRequestBytes well inside the
// reply's limit, leaving room for the per-tx framing.
const maxRequestBytesLimit = 2_000_000

// Options configure a Client and a Server. Zero values take the documented
// defaults.
type Options struct {
	// MaxUnackedTxIds bounds the ids announced and not yet acknowledged: a
	// server never asks for more, a client treats a request for more as a
	// violation. Default and most MaxUnackedLimit. Both ends of a
	// connection must agree.
	//
	// A server waits a round trip for each request, so the window and the
	// request sizes bound what one link carries: rate ≤ txs a request ÷
	// round trip. The defaults carry some 900 payments a second (3.7 MB/s)
	// over a 536 ms round trip (two of the ΔQ model's 268 ms hops); 100 ids
	// and 50 txs a request carried under 100, and on a wide-area network the
	// far nodes' mempools lagged the others' by a minute at 250 tx/s.
	MaxUnackedTxIds int
	// MaxTxsPerRequest bounds the txs a server asks for in one request.
	// Default 500.
	MaxTxsPerRequest int
	// MaxRequestBytes bounds the announced size of the txs a server asks
	// for in one request (a single tx is always allowed). Default and most
	// 2 MB, so the reply fits its 2.5 MB limit.
	MaxRequestBytes int
	// MaxTxSize is the largest tx size a client may announce; larger is a
	// violation. Default ledger.DefaultParams().MaxTxSize (16,384).
	MaxTxSize int
	// MaxInvalidTxs invalid txs within InvalidTxWindow are tolerated from
	// one peer; one more is a violation (ErrTooManyInvalidTxs). Defaults 10
	// and 10 minutes.
	MaxInvalidTxs   int
	InvalidTxWindow time.Duration
	// IsInvalid tells an error of Mempool.AddTxs that proves the tx invalid
	// (counted against the peer) from one that does not (a duplicate, a
	// conflict, a local failure). Default IsInvalidTx.
	IsInvalid func(error) bool
	// KeepAlive bounds how long a client holds a blocking request with no
	// new tx: then it says done, and the host opens a new stream, so the
	// server never waits out TxIds' timeout on a quiet network. Default
	// protocol.KeepAlive (90 s).
	KeepAlive time.Duration
	// MaxAddWait bounds how long a server waits for mempool room for one
	// reply's txs; those not added by then are dropped (a full mempool is
	// not the client's fault), so the client never waits out Idle's
	// timeout. Default 10 minutes.
	MaxAddWait time.Duration
	// BatchWait is how long a client holding a blocking request waits,
	// once it has a tx to announce, for more before it answers. Default
	// 20 ms; negative: none.
	BatchWait time.Duration
	// Admit, if set, waits until the node takes txs from peers in (its
	// edge: admission.Gate.Wait for the peers' path): meanwhile the server
	// asks its client for no txs, which hold them — backpressure, not loss.
	// An error (ctx ended) ends the session.
	Admit func(ctx context.Context) error
}

func (o Options) withDefaults() Options {
	if o.BatchWait == 0 {
		o.BatchWait = 20 * time.Millisecond
	}
	if o.MaxUnackedTxIds <= 0 {
		o.MaxUnackedTxIds = MaxUnackedLimit
	}
	o.MaxUnackedTxIds = min(o.MaxUnackedTxIds, MaxUnackedLimit)
	if o.MaxTxsPerRequest <= 0 {
		o.MaxTxsPerRequest = 500
	}
	o.MaxTxsPerRequest = min(o.MaxTxsPerRequest, o.MaxUnackedTxIds)
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = maxRequestBytesLimit
	}
	o.MaxRequestBytes = min(o.MaxRequestBytes, maxRequestBytesLimit)
	if o.MaxTxSize <= 0 {
		o.MaxTxSize = int(ledger.DefaultParams().MaxTxSize)
	}
	o.MaxTxSize = min(o.MaxTxSize, maxRequestBytesLimit)
	if o.MaxInvalidTxs <= 0 {
		o.MaxInvalidTxs = 10
	}
	if o.InvalidTxWindow <= 0 {
		o.InvalidTxWindow = 10 * time.Minute
	}
	if o.IsInvalid == nil {
		o.IsInvalid = IsInvalidTx
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = protocol.KeepAlive
	}
	if o.MaxAddWait <= 0 {
		o.MaxAddWait = 10 * time.Minute
	}
	return o
}
