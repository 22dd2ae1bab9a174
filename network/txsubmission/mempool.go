package txsubmission

import (
	"context"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// Mempool is the local mempool as tx submission uses it: the client walks
// it to announce and serve txs, the server checks and adds what it pulls.
// Every method but AddTxs must return at once.
type Mempool interface {
	// TxsAfter appends to dst up to max txs with a ticket above after, in
	// ticket order, from the current snapshot, without blocking, and
	// returns the extended slice. A walk runs every few hundred ms for
	// every peer: the caller keeps dst, so a walk allocates nothing.
	TxsAfter(dst []MempoolTx, after uint64, max int) []MempoolTx
	// Lookup returns the bytes of a tx still in the mempool.
	Lookup(txHash block.Hash) ([]byte, bool)
	Has(txHash block.Hash) bool
	// RecentlyRejected reports whether a tx with this hash failed validation
	// recently.
	RecentlyRejected(txHash block.Hash) bool
	// Changed returns a channel that is closed when the next snapshot is
	// published.
	Changed() <-chan struct{}
	// AddTxs validates the txs of one reply fully and admits them in
	// order, as adding them one by one would, waiting for room if the
	// mempool is full, and returns each tx's error (nil: admitted), one per
	// tx. The server hands it a reply whole, so the mempool may check the
	// txs' signatures together. An error wrapping a ledger rule (or
	// decoding) error means the tx is invalid. Once an add gives up because
	// ctx ended, its error and those of every tx after it wrap ctx's error.
	AddTxs(ctx context.Context, txs [][]byte) []error
}

// MempoolTx is a tx held by the mempool with its ticket, its admission
// number: tickets strictly increase along a snapshot.
type MempoolTx struct {
	Ticket uint64
	Hash   block.Hash // Blake2b-256 of Bytes
	Bytes  []byte
	Size   int // len(Bytes)
}

// IsInvalidTx is the default Options.IsInvalid: it reports whether an
// AddTxs error proves the peer sent an invalid tx — one that does not decode, or
// fails a rule that holds whatever the ledger state (signatures, fee,
// value, shape).
//
// An input not in the UTxO, an expired or not yet valid tx are not counted:
// the peer's mempool and tip lag or lead ours (a tx just included in a
// block is still announced by a peer that has not adopted the block yet),
// so honest peers send such txs all the time.
func IsInvalidTx(err error) bool {
	rule, ok := ledger.RuleOf(err)
	return ok && rule.Class() == ledger.Stateless
}
