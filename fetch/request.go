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
	// RequestBlocks asks for EBs whole, bodies and closures (a
	// /leios/fetch/2 multi-block request): what a syncing node needs of
	// the EBs its chain certifies.
	RequestBlocks
)

// BlockRef is one EB of a multi-block request: its point and announced
// size.
type BlockRef struct {
	Point  block.Point
	EbSize uint64
}

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
	// Blocks are the EBs a multi-block request asks for, in its order
	// (Point is the first's).
	Blocks []BlockRef
	// Bytes counts against the budgets: the body size, the sum of the
	// declared tx sizes, or a multi-block request's announced body sizes
	// (all the client can predict before the bodies name their txs).
	Bytes uint64
	// Issued is when the decision logic issued it (for hedging).
	Issued time.Time
}

func (r *Request) String() string {
	switch r.Kind {
	case RequestBlocks:
		return fmt.Sprintf("#%d %d EBs whole from %s on (%d B of bodies) from %s", r.ID, len(r.Blocks), r.Point, r.Bytes, r.Peer.ShortString())
	case RequestBody:
		return fmt.Sprintf("#%d body %s (%d B) from %s", r.ID, r.Point, r.Bytes, r.Peer.ShortString())
	}
	return fmt.Sprintf("#%d %d txs of %s (%d B) from %s", r.ID, len(r.Offsets), r.Point, r.Bytes, r.Peer.ShortString())
}
