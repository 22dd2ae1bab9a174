package mempool

import (
	"github.com/leiosnode/leiosnode/ledger"
	"sync/atomic"
	"time"
)

// Stats are the mempool's counters since New, for metrics.
type Stats struct {
	Added      uint64 // txs admitted by Add
	Duplicates uint64 // adds refused with ErrDuplicate
	// Awaited counts txs admitted once the inputs they had lacked came:
	// their parent admitted after them, or on chain. Each was counted in
	// Rejected when it was first refused.
	Awaited uint64
	// Rejected counts adds refused by a ledger rule, by the rule's error
	// text (e.g. "ledger: input not in UTxO").
	Rejected map[string]uint64
	// DroppedOnSync counts txs a sync found invalid at the new tip (most
	// often: included in the adopted block).
	DroppedOnSync uint64
	// Removed counts txs RemoveTxs dropped, those it named and those that
	// depended on them.
	Removed uint64
	Syncs   uint64 // committed syncs
	// SyncsExtension and SyncsFull split Syncs by SyncReport.Path.
	SyncsExtension uint64
	SyncsFull      uint64
	SyncRestarts   uint64 // syncs restarted because of a removal
	// MaxSyncLockHold is the longest a sync held the add lock.
	MaxSyncLockHold time.Duration
}

// counters back Stats. Each is written with atomics, so Stats can be read
// at any time without the add lock.
type counters struct {
	added, duplicates, awaited, droppedOnSync, removed, syncRestarts atomic.Uint64
	syncs, syncsExtension, syncsFull                                 atomic.Uint64
	rejected                                                         [ledger.NumRules]atomic.Uint64
	maxLockHold                                                      atomic.Int64 // nanoseconds
}

func (c *counters) noteLockHold(d time.Duration) {
	for {
		old := c.maxLockHold.Load()
		if int64(d) <= old || c.maxLockHold.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

func (c *counters) stats() Stats {
	s := Stats{
		Added:           c.added.Load(),
		Duplicates:      c.duplicates.Load(),
		Awaited:         c.awaited.Load(),
		Rejected:        map[string]uint64{},
		DroppedOnSync:   c.droppedOnSync.Load(),
		Removed:         c.removed.Load(),
		Syncs:           c.syncs.Load(),
		SyncsExtension:  c.syncsExtension.Load(),
		SyncsFull:       c.syncsFull.Load(),
		SyncRestarts:    c.syncRestarts.Load(),
		MaxSyncLockHold: time.Duration(c.maxLockHold.Load()),
	}
	for _, rule := range ledger.Rules() {
		if n := c.rejected[rule.Index()].Load(); n > 0 {
			s.Rejected[rule.Err().Error()] = n
		}
	}
	return s
}
