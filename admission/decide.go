package admission

import (
	"fmt"
	"time"
)

// Reason says why txs are refused.
type Reason uint8

// The reasons, in the order Decide tries them: it gives the first that
// holds. The two that close both paths come first, so that a full mempool
// is the reason both paths give, whatever else holds; the two that close
// local submissions alone come after them.
const (
	Admit       Reason = iota // not refused
	Syncing                   // the selected tip is far behind the clock
	MempoolFull               // the mempool is at its high-water mark
	LeiosBehind               // the latest EBs' voting windows were missed (local submissions only)
	QueueDelay                // the oldest tx held waited too long, or too many are held (local submissions only)
	numReasons
)

// Reasons lists the reasons txs are refused for, in the order Decide tries
// them.
func Reasons() []Reason {
	return []Reason{Syncing, MempoolFull, LeiosBehind, QueueDelay}
}

func (r Reason) String() string {
	switch r {
	case Admit:
		return "admit"
	case Syncing:
		return "syncing"
	case LeiosBehind:
		return "leios-behind"
	case MempoolFull:
		return "mempool-full"
	case QueueDelay:
		return "queue-delay"
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// Path is where txs enter the node.
type Path uint8

const (
	// Local is the HTTP API's submission: wallets and tools, which retry.
	Local Path = iota
	// Peers is tx submission from peers: txs another node admitted.
	Peers
	numPaths
)

func (p Path) String() string {
	if p == Peers {
		return "txsubmission"
	}
	return "api"
}

// Figures are what Decide decides from: how far behind the node is now.
type Figures struct {
	Now time.Time
	// ClockSlot is the wall clock's slot, TipSlot the selected tip's.
	ClockSlot, TipSlot uint64
	// OldestAdmitted is when the oldest tx the mempool holds was admitted;
	// zero when it holds none.
	OldestAdmitted time.Time
	// MempoolBytes is the byte total of the txs held, of MempoolCapacity;
	// MempoolTxs their count.
	MempoolBytes, MempoolCapacity int
	MempoolTxs                    int
	// MissedInARow counts this node's latest EBs, newest first, whose
	// voting window closed before it held and checked their closures; 0
	// when the latest one was in time (or there is none).
	MissedInARow int
}

// Decision is whether txs are taken in now, and if not why, and when to
// come back.
type Decision struct {
	Reason     Reason // Admit, or why not
	RetryAfter time.Duration
	// Detail says, for an operator, what the figure was against its bound.
	Detail string
}

// Admits reports whether the decision takes txs in.
func (d Decision) Admits() bool { return d.Reason == Admit }

// Decide decides for one path from the figures.
func Decide(o Options, f Figures, path Path) Decision {
	o = o.withDefaults()
	if lag := int64(f.ClockSlot) - int64(f.TipSlot); lag > int64(o.SyncLagSlots) {
		return Decision{Reason: Syncing, RetryAfter: o.SyncRetryAfter,
			Detail: fmt.Sprintf("the tip is %d slots behind the clock (more than %d)", lag, o.SyncLagSlots)}
	}
	if f.MempoolCapacity > 0 && float64(f.MempoolBytes) >= o.HighWater*float64(f.MempoolCapacity) {
		return Decision{Reason: MempoolFull, RetryAfter: o.RetryAfter,
			Detail: fmt.Sprintf("the mempool holds %d of %d bytes", f.MempoolBytes, f.MempoolCapacity)}
	}
	if path == Peers {
		return Decision{}
	}
	if f.MissedInARow >= o.MissedDeadlines {
		return Decision{Reason: LeiosBehind, RetryAfter: o.RetryAfter,
			Detail: fmt.Sprintf("the voting windows of the last %d EBs closed before their closures were held and checked", f.MissedInARow)}
	}
	if o.MaxBacklogTxs > 0 && f.MempoolTxs > o.MaxBacklogTxs {
		return Decision{Reason: QueueDelay, RetryAfter: o.RetryAfter,
			Detail: fmt.Sprintf("the mempool holds %d txs, more than the %d the chain takes within the inclusion bound", f.MempoolTxs, o.MaxBacklogTxs)}
	}
	if o.MaxBacklogBytes > 0 && f.MempoolBytes > o.MaxBacklogBytes {
		return Decision{Reason: QueueDelay, RetryAfter: o.RetryAfter,
			Detail: fmt.Sprintf("the mempool holds %d bytes of txs, more than the %d the chain takes within the inclusion bound", f.MempoolBytes, o.MaxBacklogBytes)}
	}
	if !f.OldestAdmitted.IsZero() && o.beyondNextEBs(f) {
		if wait := f.Now.Sub(f.OldestAdmitted); wait > o.MaxQueueDelay {
			return Decision{Reason: QueueDelay, RetryAfter: o.RetryAfter,
				Detail: fmt.Sprintf("the oldest tx held has waited %.1f s (more than %.1f s)", wait.Seconds(), o.MaxQueueDelay.Seconds())}
		}
	}
	return Decision{}
}

// beyondNextEBs reports whether the mempool holds more than the next EBs
// take (always, when o does not say what that is).
func (o Options) beyondNextEBs(f Figures) bool {
	if o.NextEBsTxs <= 0 && o.NextEBsBytes <= 0 {
		return true
	}
	return o.NextEBsTxs > 0 && f.MempoolTxs > o.NextEBsTxs || o.NextEBsBytes > 0 && f.MempoolBytes > o.NextEBsBytes
}
