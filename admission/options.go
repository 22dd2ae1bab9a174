package admission

import "time"

// Defaults of Options.
const (
	// DefaultMaxQueueDelay keeps the oldest tx's wait, and so the backlog,
	// to ten seconds of what the chain carries: a tx admitted waits about
	// that long at most, well inside the half minute a wallet tolerates.
	DefaultMaxQueueDelay = 10 * time.Second
	// DefaultMissedDeadlines: two EBs in a row whose windows closed first.
	// One miss can be bad luck (a fork, an EB announced late by its
	// leader); two say the node cannot keep up.
	DefaultMissedDeadlines = 2
	// DefaultSyncLagSlots is how far behind the clock the tip may be before
	// the node counts as syncing.
	DefaultSyncLagSlots = 100
	// DefaultHighWater is the share of the mempool's byte bound at which
	// txs are refused rather than left to wait for room.
	DefaultHighWater = 0.9
	// DefaultRetryAfter is when a refused submitter should come back.
	DefaultRetryAfter = time.Second
	// DefaultSyncRetryAfter is that for a node that is syncing.
	DefaultSyncRetryAfter = 5 * time.Second
	// DefaultInterval is how often a Gate re-decides.
	DefaultInterval = 100 * time.Millisecond
)

// Options bound how far behind the node may be and still take txs in.
// Zero fields take the defaults above.
type Options struct {
	// MaxQueueDelay bounds the oldest tx's wait, MaxBacklogTxs and
	// MaxBacklogBytes the txs and bytes held (0: no bound): the backlog
	// judged by what it has waited and by what it will wait. The first
	// needs the wait to have happened; the others refuse a surge at once,
	// before it has queued a backlog the chain takes minutes to clear —
	// of small txs by their count, of large ones by their bytes, below
	// the mempool's own bound, which refuses peers too.
	MaxQueueDelay   time.Duration
	MaxBacklogTxs   int
	MaxBacklogBytes int
	// NextEBsTxs and NextEBsBytes are what the chain's next EBs take:
	// the EB awaiting its certificate, whose txs the mempool holds until
	// the RB that certifies it, and the one that RB announces. A mempool
	// within both holds nothing those leave behind: a tx admitted now
	// rides with the oldest, however long that one waited (a run of RBs
	// too early to certify, or long gaps, age it), so MaxQueueDelay then
	// refuses nothing — and the EB after a certificate goes out full. 0
	// and 0: the wait alone decides.
	NextEBsTxs, NextEBsBytes int
	MissedDeadlines          int
	SyncLagSlots             uint64
	HighWater                float64
	RetryAfter               time.Duration
	SyncRetryAfter           time.Duration
	// Interval is how often a Gate re-decides.
	Interval time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxQueueDelay <= 0 {
		o.MaxQueueDelay = DefaultMaxQueueDelay
	}
	if o.MissedDeadlines <= 0 {
		o.MissedDeadlines = DefaultMissedDeadlines
	}
	if o.SyncLagSlots == 0 {
		o.SyncLagSlots = DefaultSyncLagSlots
	}
	if o.HighWater <= 0 || o.HighWater > 1 {
		o.HighWater = DefaultHighWater
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	if o.SyncRetryAfter <= 0 {
		o.SyncRetryAfter = DefaultSyncRetryAfter
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	return o
}
