package fetch

import (
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
)

// RequestKind says what a Request asks for.
type RequestKind uint8

const (
	RequestBody RequestKind = iota + 1 // an EB body
	RequestTxs                         // txs of an EB's closure
)

// Request is one request the decision logic issued to one peer.
type Request struct {
	ID    uint64
	Peer  peer.ID
	Kind  RequestKind
	Point block.Point // a real point: for txs, one of an EB that names them
	// EbSize is the announced size of a body request's EB.
	EbSize uint64
	// Offsets (ascending) and TxHashes (at those offsets of the EB body)
	// are what a txs request asks for and what the reply must hash to.
	Offsets  []int
	TxHashes []block.Hash
	// Bytes counts against the budgets: the body size, or the sum of the
	// declared tx sizes.
	Bytes uint64
	// Issued is when the decision logic issued it (for hedging).
	Issued time.Time
}

func (r *Request) String() string {
	if r.Kind == RequestBody {
		return fmt.Sprintf("#%d body %s (%d B) from %s", r.ID, r.Point, r.Bytes, r.Peer.ShortString())
	}
	return fmt.Sprintf("#%d %d txs of %s (%d B) from %s", r.ID, len(r.Offsets), r.Point, r.Bytes, r.Peer.ShortString())
}
