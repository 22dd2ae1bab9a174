package fetch

import (
	"errors"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// Violations by a server: each ends the session and counts against the peer.
var (
	// ErrBadBody: a body whose hash or size differs from the point asked
	// for, or that fails block.DecodeEBBody. A peer only offers a body it
	// holds, and holds only valid ones.
	ErrBadBody = protocol.NewViolation("fetch: EB body does not match the request")
	// ErrBadTxs: a txs reply for another point or other bitmaps, or a tx
	// whose hash is not the one the EB body names at its offset.
	ErrBadTxs = protocol.NewViolation("fetch: txs do not match the request")
	// ErrBadRequest: a client asked for txs at offsets beyond the EB body.
	ErrBadRequest = protocol.NewViolation("fetch: request beyond the EB body")
)

// ErrNotHeld ends a server session whose client asked for a body or txs
// the node does not hold (any more). It is not a violation: an offer says
// "held now", and GC may have dropped the EB since.
var ErrNotHeld = errors.New("fetch: requested EB data not held")
