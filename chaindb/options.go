package chaindb

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/ledger"
)

// DefaultK is the security parameter used when Options.K is zero: the devnet
// value. Public-testnet-like configurations use 108.
const DefaultK = 10

// Options configure a DB.
type Options struct {
	// K is the security parameter: the deepest rollback, and the distance in
	// blocks from the tip to the immutable tip. Zero means DefaultK (10).
	K int

	// GenesisUTxO is the UTxO at origin. It is written to the backing store
	// when the database is created.
	GenesisUTxO ledger.MapUTxO

	// Network is the network the database belongs to: stamped on a new
	// database, checked on open (a database of another genesis is refused).
	// The zero value is a network of its own, for tests.
	Network pebblestore.Network

	// ApplyBlock validates a block's contents against the UTxO view before it
	// and returns its diff, whose Txs counts the txs it applied: that is what
	// the block adds to TxsOnChain. parent is the header of the block it
	// extends (nil for the first block): a CertRB certifies, and applies the
	// closure of, the EB its parent announced. reapply is true when
	// re-applying a block this node already validated (replay at Open):
	// signature checks may be skipped. Required.
	ApplyBlock func(utxo ledger.UTxO, blk *block.Block, parent *block.Header, reapply bool) (*ledger.Diff, error)

	// TiebreakSlots is how far apart, in slots, the tips of two chains of
	// one length may be for the chain whose tip has the lower leader VRF
	// output to be preferred — Praos's restricted VRF tiebreaker: two
	// leaders that forged so close together did not see each other's
	// block, and every node that holds both then selects the same one.
	// Farther apart, the selection keeps the chain it has. Zero: only tips
	// of one slot.
	TiebreakSlots uint64

	// ValidateBlock checks what does not depend on the ledger (header
	// signature, VRF, leader eligibility). May be nil. chaindb itself checks
	// the body against the header's hash and size, the block number and the
	// slot order before calling it.
	ValidateBlock func(blk *block.Block) error

	// AcceptLostImmutableTip opens a database whose immutable-tip marker
	// file is gone, taking the immutable tip Pebble holds as final and
	// marking it anew. Without the marker, Open cannot tell whether the
	// write-ahead log lost final blocks, and refuses the database as
	// corrupt. Check never accepts it.
	AcceptLostImmutableTip bool

	// Logger receives chain-selection events and Pebble's own log lines.
	// Nil means a logger that discards everything.
	Logger *slog.Logger

	// Registerer, if set, takes the database's metrics (metrics.go) when
	// Open succeeds. CheckOpen registers nothing.
	Registerer prometheus.Registerer

	// fs replaces the filesystem Pebble writes to; tests use an in-memory one.
	fs vfs.FS
}

func (o Options) withDefaults() (Options, error) {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.K < 0 {
		return o, fmt.Errorf("chaindb: k = %d, must be positive", o.K)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o, nil
}
