package fetch

import (
	"log/slog"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Defaults of Options (docs/protocol.md, "Mini-protocols").
const (
	DefaultMaxInFlightBytes     = 50_000_000
	DefaultMaxPeerInFlightBytes = 5_000_000
	DefaultMaxRequestBytes      = 500_000
	DefaultMaxPeersPerItem      = 2
	DefaultMaxRequestsPerPeer   = MaxPipelined + 1
	DefaultHedgeAfter           = 2 * time.Second
)

// Options configure a Fetcher. Store and Ingest are required; zero values
// of the others take the documented defaults.
type Options struct {
	// Store is the LeiosDB as the Fetcher reads it: to serve peers, and to
	// check its own state against (CheckConsistency).
	Store Store
	// Ingest receives every reply the client checked against its request.
	Ingest Ingest

	// Limits validate EB bodies and size the protocol's messages. Default
	// block.DefaultEBLimits; every node of a network must agree.
	Limits block.EBLimits

	// MaxInFlightBytes bounds the bytes requested and not yet answered, over
	// all peers. Default 50 MB.
	MaxInFlightBytes uint64
	// MaxPeerInFlightBytes bounds them per peer. Default 5 MB.
	MaxPeerInFlightBytes uint64
	// MaxRequestBytes bounds one txs request (the sum of its declared tx
	// sizes). A body request is one body, whatever its size. Default 500 kB.
	MaxRequestBytes uint64
	// MaxPeersPerItem bounds the peers a body or a tx is requested from at
	// once. Default 2.
	MaxPeersPerItem int
	// MaxRequestsPerPeer bounds the outstanding requests per peer. Default
	// and maximum MaxPipelined+1, what the protocol lets a client pipeline.
	MaxRequestsPerPeer int
	// HedgeAfter is how long a request for an item must have been
	// outstanding before the item is also requested from another peer
	// (within MaxPeersPerItem): a slow peer does not hold an EB up, and a
	// fast one is not doubled. Default 2 s.
	HedgeAfter time.Duration

	// KeepAlive is how long a client's stream stays open with nothing
	// asked: then the client says done, and its next request opens a new
	// stream, so the server never waits out Idle's timeout. The peer's
	// offers and budget stay meanwhile. Default protocol.KeepAlive (90 s).
	KeepAlive time.Duration

	// Syncing reports whether the node is catching up: then EBs are fetched
	// oldest first, otherwise freshest first. Nil: always caught up.
	Syncing func() bool
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Ingest is where checked replies go: the pipeline's handlers, which store
// them (LeiosDB first, then the tx cache) and then tell the Fetcher what is
// held (BodyHeld, TxsHeld). Errors that wrap leiosdb.ErrUnknownPoint (the
// point was pruned meanwhile) or leiosdb.ErrTxSizeMismatch (the EB is
// invalid, and its points are rejected) are not the peer's fault and end
// nothing; any other error ends the session.
type Ingest interface {
	// Body stores the EB body of p.
	Body(p block.Point, eb *block.EBBody) error
	// Txs stores txs of the closure of the EB at p, fetched from a peer
	// (not validated), with the hashes the reply's check computed.
	Txs(p block.Point, txs []block.HashedTx) error
}

func (o Options) withDefaults() Options {
	if o.Limits == (block.EBLimits{}) {
		o.Limits = block.DefaultEBLimits
	}
	if o.MaxInFlightBytes == 0 {
		o.MaxInFlightBytes = DefaultMaxInFlightBytes
	}
	if o.MaxPeerInFlightBytes == 0 {
		o.MaxPeerInFlightBytes = DefaultMaxPeerInFlightBytes
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.MaxPeersPerItem <= 0 {
		o.MaxPeersPerItem = DefaultMaxPeersPerItem
	}
	if o.MaxRequestsPerPeer <= 0 || o.MaxRequestsPerPeer > DefaultMaxRequestsPerPeer {
		o.MaxRequestsPerPeer = DefaultMaxRequestsPerPeer
	}
	if o.HedgeAfter <= 0 {
		o.HedgeAfter = DefaultHedgeAfter
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = protocol.KeepAlive
	}
	if o.Syncing == nil {
		o.Syncing = func() bool { return false }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
