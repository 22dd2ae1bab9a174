package leios

import (
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/txcache"
)

// SyncingSlots is how far behind the wall clock the selected tip must be for
// the node to count as syncing: then EBs are fetched oldest first.
const SyncingSlots = 100

// Chain is the selected chain as the pipeline follows it; *chaindb.DB
// implements it.
type Chain interface {
	Tip() block.Tip
	ImmutableTip() block.Tip
	// TipChanged returns a channel closed at the next change of the tip
	// (and so of the immutable tip).
	TipChanged() <-chan struct{}
	// BlockByNumber returns the selected chain's block n.
	BlockByNumber(n uint64) (*block.Block, error)
}

// Options configure a Pipeline. Zero values take the documented defaults.
type Options struct {
	// Dir is the LeiosDB's directory. Required.
	Dir string
	// DBCacheBytes sizes the LeiosDB's block cache. Default leiosdb's
	// (128 MiB); a harness of many nodes in one process takes less.
	DBCacheBytes int64
	// Limits bound EB bodies and closures; every node of a network agrees on
	// them. Default block.DefaultEBLimits.
	Limits block.EBLimits
	// TxCache configures the tx cache. The zero value takes txcache's
	// defaults: 128 announcements, room for 128 full EBs (about 160 MiB).
	TxCache txcache.Options
	// Fetch sets the fetch logic's budgets; zero fields take fetch's
	// defaults. The pipeline sets its Store, Ingest, Limits, Now and Logger,
	// and its Syncing unless set here.
	Fetch fetch.Options

	// ValidateHeader checks an announced header that a peer's notify stream
	// brings (issuer, VRF, signature): consensus.Validator.ValidateHeader.
	// Required.
	ValidateHeader func(*block.Header) error
	// Clock is the network's slot clock; a header whose slot starts more
	// than MaxClockSkew from now is from the future. Required.
	Clock        consensus.Clock
	MaxClockSkew time.Duration

	// Chain, if set, is the selected chain: the pipeline re-announces its
	// volatile EBs at the start, fetches oldest first while the tip is
	// SyncingSlots behind the clock, and prunes as its immutable tip
	// advances. Nil (a harness of Leios nodes without chains): none of that.
	Chain Chain

	// Registerer, if set, receives the pipeline's metrics.
	Registerer prometheus.Registerer
	// Now is the wall clock. Default time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		return o, errors.New("leios: Options.Dir is required")
	}
	if o.ValidateHeader == nil || o.Clock.SlotLength <= 0 {
		return o, errors.New("leios: Options.ValidateHeader and Options.Clock are required")
	}
	if o.Limits == (block.EBLimits{}) {
		o.Limits = block.DefaultEBLimits
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}
