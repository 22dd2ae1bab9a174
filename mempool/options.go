package mempool

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// Defaults of Options.
const (
	// DefaultCapacityBytes is 4 × (RB body max 90,112 + EB closure max
	// 12,000,000), the prototype values of consensus.DefaultLeiosParams:
	// room for consensus.MempoolBlocks blocks' worth of txs, RB and EB,
	// what a node sizes its mempool to from its genesis.
	DefaultCapacityBytes = 4 * (90_112 + 12_000_000)
	// DefaultSyncDeltaCap is the delta (txs added while a sync worked) small
	// enough to reapply under the add lock.
	DefaultSyncDeltaCap = 256
	// DefaultSyncMaxRounds bounds the off-lock catch-up rounds of a sync, a
	// safety valve should adds outpace reapplication.
	DefaultSyncMaxRounds = 8
	// DefaultRejectedMemory is the number of recently rejected tx hashes
	// remembered for RecentlyRejected.
	DefaultRejectedMemory = 4096
)

// ValidateFunc validates tx against utxo at slot and returns its diff:
// ledger.Apply and ledger.Reapply have this type.
type ValidateFunc func(p ledger.Params, utxo ledger.UTxO, slot uint64, tx *ledger.Tx) (*ledger.Diff, error)

// Options configure a Mempool. TipLedger is required; every other zero
// field takes its default.
type Options struct {
	// TipLedger returns the UTxO at the selected tip and that tip. The
	// mempool calls release once it no longer reads view: when a sync has
	// replaced it, or at Close. A node passes chaindb's TipLedger; the
	// benchmark a simulated ledger.
	TipLedger func() (view ledger.UTxO, tip block.Tip, release func(), err error)
	// TipChanged returns a channel closed at the next tip change (as
	// chaindb's DB.TipChanged). Only Run needs it.
	TipChanged func() <-chan struct{}
	// Abandoned returns the txs of the blocks that were on the chain ending
	// at old and no longer are, oldest block first, each block's txs in the
	// order the ledger applied them (a block carrying a certificate gives
	// its certified closure), less what the blocks that replaced them hold
	// too (both sides of a slot battle may certify one EB); none while old
	// is on the selected chain. Run
	// asks it at every tip change and adds those txs back, then the ones the
	// sync dropped for spending them. Nil: nothing comes back after a
	// rollback.
	Abandoned func(old block.Tip) ([]*ledger.Tx, error)
	// Slot is the slot txs are validated for (their ttl and validity
	// start). Default: the slot after the tip they are validated against.
	Slot func() uint64
	// Params are the protocol parameters. Default ledger.DefaultParams().
	Params ledger.Params
	// Apply validates a new tx fully. Default ledger.Apply.
	Apply ValidateFunc
	// Reapply revalidates an admitted tx (no signatures). Default
	// ledger.Reapply. A tx Apply or Reapply accepts is taken to spend its
	// inputs and create its outputs under its id, as ledger.Apply's diff
	// records: the mempool indexes it so, from the tx itself. A Reapply of
	// one's own turns off Sync's extension path, whose reasoning is
	// ledger.Reapply's (extension.go).
	Reapply ValidateFunc
	// CapacityBytes bounds the byte total of the txs held. Default
	// DefaultCapacityBytes.
	CapacityBytes int
	// SyncDeltaCap: a sync takes the add lock once the delta is at most
	// this many txs. Default DefaultSyncDeltaCap.
	SyncDeltaCap int
	// SyncMaxRounds: a sync takes the add lock after this many off-lock
	// delta rounds whatever the delta. Default DefaultSyncMaxRounds.
	SyncMaxRounds int
	// RejectedMemory is how many rejected tx hashes RecentlyRejected
	// remembers, and how many txs await inputs that may yet come (at most
	// an eighth of CapacityBytes of them), oldest forgotten first. Default
	// DefaultRejectedMemory.
	RejectedMemory int
	// Logger receives what Run gives back after a rollback. Default
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock Entry.Admitted is read from. Default time.Now.
	Now func() time.Time
	// Registerer, if set, takes the mempool's metrics (metrics.go).
	Registerer prometheus.Registerer

	// hooks let in-package tests stop a sync at its interesting points.
	hooks hooks
}

// hooks are called, when set, at points of a sync where tests interleave.
type hooks struct {
	// afterRevalidate runs off the lock after a sync revalidated the
	// snapshot it started from, and after each delta round (round 0 first).
	afterRevalidate func(round int)
	// underLock runs while a sync holds the add lock, before it publishes.
	underLock func()
}

func (o Options) withDefaults() Options {
	if o.Params == (ledger.Params{}) {
		o.Params = ledger.DefaultParams()
	}
	if o.Apply == nil {
		o.Apply = ledger.Apply
	}
	if o.Reapply == nil {
		o.Reapply = ledger.Reapply
	}
	if o.CapacityBytes <= 0 {
		o.CapacityBytes = DefaultCapacityBytes
	}
	if o.SyncDeltaCap <= 0 {
		o.SyncDeltaCap = DefaultSyncDeltaCap
	}
	if o.SyncMaxRounds <= 0 {
		o.SyncMaxRounds = DefaultSyncMaxRounds
	}
	if o.RejectedMemory <= 0 {
		o.RejectedMemory = DefaultRejectedMemory
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
