package leios

import (
	"errors"
	"iter"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leios/protocolset"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/txcache"
)

// Chain is the selected chain as the pipeline follows it (Attach);
// *chaindb.DB implements it.
type Chain interface {
	Tip() block.Tip
	ImmutableTip() block.Tip
	// TipChanged returns a channel closed at the next change of the tip
	// (and so of the immutable tip).
	TipChanged() <-chan struct{}
	// BlockByNumber returns the selected chain's block n.
	BlockByNumber(n uint64) (*block.Block, error)
	// HeaderByNumber returns the header of the selected chain's block n.
	HeaderByNumber(n uint64) (*block.Header, error)
	// Reselect runs chain selection again over chains held back by a
	// parked block (a CertRB whose closure was incomplete).
	Reselect() (chaindb.AddResult, error)
}

// Mempool is where the pipeline looks for an EB's txs before it fetches
// them, and as they are admitted: a tx the mempool holds was validated in
// full on admission, and usually reaches the node by tx-submission before
// or while the EB that names it is fetched. *mempool.Mempool implements it.
type Mempool interface {
	Tx(txHash block.Hash) (*ledger.Tx, bool)
	Has(txHash block.Hash) bool
	// Changed is closed when a newer snapshot is published; Since yields
	// the entries admitted after a ticket.
	Changed() <-chan struct{}
	Since(ticket uint64) iter.Seq[mempool.Entry]
}

// Options configure a Pipeline. Zero values take the documented defaults.
type Options struct {
	// Dir is the LeiosDB's directory. Required.
	Dir string
	// Network is the network the LeiosDB belongs to (leiosdb.Options).
	Network pebblestore.Network
	// DBCacheBytes sizes the LeiosDB's block cache. Default leiosdb's
	// (128 MiB); a harness of many nodes in one process takes less.
	DBCacheBytes int64
	// DBMemTableBytes sizes the LeiosDB's memtables. Default leiosdb's
	// (64 MiB); a harness of many nodes in one process takes less.
	DBMemTableBytes uint64
	// Limits bound EB bodies and closures; every node of a network agrees on
	// them. Default block.DefaultEBLimits. Their Encoding is ignored: EB
	// bodies are in the Validator's genesis's (leios.encoding).
	Limits block.EBLimits
	// TxCache configures the tx cache. The zero value takes txcache's
	// defaults: 128 announcements, room for 128 full EBs (about 160 MiB).
	TxCache txcache.Options
	// Fetch sets the fetch logic's budgets; zero fields take fetch's
	// defaults. The pipeline sets its Store, Ingest, Limits, Now and Logger,
	// and its Syncing unless set here.
	Fetch fetch.Options
	// Protocols chooses the Leios mini-protocol sets Services serves and
	// speaks. Default both.
	Protocols protocolset.Set

	// Validator holds the genesis rules: it checks the headers peers
	// announce (issuer, VRF, signature), the votes they relay (against its
	// committee) and the certificates of CertRBs, and gives the slot clock,
	// the clock skew and the Leios parameters. Required.
	Validator *consensus.Validator
	// Ledger are the ledger rules a certified closure is applied with.
	// Default ledger.DefaultParams().
	Ledger ledger.Params
	// ValidateHeader, if set, replaces Validator.ValidateHeader for the
	// headers peers announce: tests of the pipeline alone announce headers
	// of stand-in issuers.
	ValidateHeader func(*block.Header) error

	// Registerer, if set, receives the pipeline's metrics (metrics.go,
	// ebtimes.go) and its LeiosDB's.
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
	if o.Validator == nil {
		return o, errors.New("leios: Options.Validator is required")
	}
	if o.ValidateHeader == nil {
		o.ValidateHeader = o.Validator.ValidateHeader
	}
	if o.Ledger == (ledger.Params{}) {
		o.Ledger = ledger.DefaultParams()
	}
	if o.Limits == (block.EBLimits{}) {
		o.Limits = block.DefaultEBLimits
	}
	// The network's, whatever the limits came with: the LeiosDB, the fetch
	// client and server decode every body in it.
	o.Limits.Encoding = o.Validator.Leios().Encoding
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}
