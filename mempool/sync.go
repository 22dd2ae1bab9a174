package mempool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// SyncPath is how a sync judged the txs it kept.
type SyncPath uint8

const (
	// SyncFull reapplied every tx on the new tip's ledger: after a
	// rollback, when the old tip is older than the view can speak for, or
	// when the view cannot say what the new blocks spent (or
	// Options.Reapply is one's own).
	SyncFull SyncPath = iota + 1
	// SyncExtension judged the txs from what the blocks since the old tip
	// spent, reapplying none (extension.go): the new tip extends the old.
	SyncExtension
)

func (p SyncPath) String() string {
	switch p {
	case SyncFull:
		return "full"
	case SyncExtension:
		return "extension"
	}
	return "none"
}

// SyncReport describes one Sync.
type SyncReport struct {
	Tip    block.Tip // the tip synced to
	Synced bool      // false: the tip had not changed, nothing was done
	Path   SyncPath  // how the committed attempt judged the txs; zero if not Synced
	// Revalidated is the number of txs the committed attempt judged at the
	// new tip — reapplied (SyncFull) or carried (SyncExtension): the
	// starting snapshot's, every delta round's and the residual.
	Revalidated int
	// ViewLookups is, on the extension path, how many inputs were looked
	// up in the new tip's ledger: those whose creator, a held tx, was
	// dropped. Every other tx kept costs no ledger read.
	ViewLookups int
	Rounds      int           // off-lock delta rounds
	Residual    int           // txs judged under the add lock
	Dropped     []block.Hash  // txs invalid at the new tip, in ticket order
	Restarts    int           // restarts caused by removals
	LockHeld    time.Duration // how long the commit held the add lock
	// dropped are the txs of Dropped: what a rollback's give-back adds
	// again, those admitted while the sync ran included.
	dropped []*ledger.Tx
}

// Run syncs the mempool on every tip change until ctx ends and, after a
// rollback, gives back what the fork that lost took from it (giveBack).
// Changes that arrive while a sync runs are coalesced into one more sync. It
// returns nil when ctx ends, or the error of a sync that failed (a ledger
// read).
func (m *Mempool) Run(ctx context.Context) error {
	if m.opts.TipChanged == nil {
		return errors.New("mempool: Run needs Options.TipChanged")
	}
	for {
		changed := m.opts.TipChanged() // before the sync, so no change is missed
		abandoned := m.abandonedSince(m.Snapshot().Tip())
		r, err := m.Sync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(abandoned) > 0 {
			m.giveBack(ctx, abandoned, r.dropped)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		}
	}
}

// Sync revalidates the mempool against the current tip's ledger if the tip
// moved since the latest snapshot; see the package doc for how the work
// stays off the add lock, and for the extension path. The result equals one
// full revalidation of the txs held at the commit, in ticket order, against
// the new tip.
func (m *Mempool) Sync(ctx context.Context) (SyncReport, error) {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	view, tip, release, err := m.opts.TipLedger()
	if err != nil {
		return SyncReport{}, fmt.Errorf("mempool: sync: reading the tip's ledger: %w", err)
	}
	base := &baseView{utxo: view, tip: tip, release: release}
	if tip == m.Snapshot().Tip() {
		base.close()
		return SyncReport{Tip: tip}, nil
	}
	r, err := m.syncTo(ctx, base)
	if err != nil {
		base.close() // never published
		return r, err
	}
	return r, nil
}

// syncTo builds a candidate on base off the lock, converges on the delta,
// and commits under the add lock. It starts over from a fresh snapshot
// whenever the removal generation moves, so a removal is never undone.
func (m *Mempool) syncTo(ctx context.Context, base *baseView) (SyncReport, error) {
	slot := m.slotFor(base)
	restarts := 0
	for ; ; restarts++ {
		if restarts > 0 {
			m.counters.syncRestarts.Add(1)
		}
		// The generation is read before the snapshot: a removal publishes
		// before it bumps the generation, so this snapshot includes every
		// removal up to gen.
		gen := m.removals.Load()
		start := m.Snapshot()
		j := m.newJudge(base, start, slot)
		r := SyncReport{Tip: base.tip, Synced: true, Path: j.path(), Restarts: restarts}
		// The tallest tent pole: every tx of the snapshot, off the lock.
		if err := j.run(ctx, start.txs, 0, &r, true); err != nil {
			return r, err
		}
		done := len(start.txs) // of start's lineage, judged
		if hook := m.opts.hooks.afterRevalidate; hook != nil {
			hook(0)
		}

		// Catch up with the adds made meanwhile, still off the lock. Adds
		// extend start's lineage; another lineage means a removal, whose
		// generation may not show yet.
		removed := false
		for r.Rounds < m.opts.SyncMaxRounds {
			latest := m.Snapshot()
			if m.removals.Load() != gen || latest.lin != start.lin {
				removed = true
				break
			}
			if len(latest.txs)-done <= m.opts.SyncDeltaCap {
				break
			}
			if err := j.run(ctx, latest.txs, done, &r, true); err != nil {
				return r, err
			}
			done = len(latest.txs)
			r.Rounds++
			if hook := m.opts.hooks.afterRevalidate; hook != nil {
				hook(r.Rounds)
			}
		}
		if removed {
			continue
		}

		if err := m.addLock.lock(ctx); err != nil {
			return r, err
		}
		latest := m.Snapshot()
		if m.removals.Load() != gen || latest.lin != start.lin {
			m.addLock.unlock()
			continue
		}
		held := time.Now()
		r.Residual = len(latest.txs) - done
		if err := j.run(ctx, latest.txs, done, &r, false); err != nil {
			m.addLock.unlock()
			return r, err
		}
		if hook := m.opts.hooks.underLock; hook != nil {
			hook()
		}
		m.publishLocked(j.cand.snapshot())
		m.admitFoundLocked()
		r.LockHeld = time.Since(held)
		m.addLock.unlock()

		m.counters.syncs.Add(1)
		if r.Path == SyncExtension {
			m.counters.syncsExtension.Add(1)
		} else {
			m.counters.syncsFull.Add(1)
		}
		m.counters.droppedOnSync.Add(uint64(len(r.Dropped)))
		m.counters.noteLockHold(r.LockHeld)
		return r, nil
	}
}

// judge builds one sync attempt's candidate on the new base: from the txs
// of start's lineage, in order, each kept or dropped — carried (carry set:
// the extension path) or reapplied.
type judge struct {
	m     *Mempool
	cand  *builder
	slot  uint64
	carry *carrier
}

// newJudge takes the extension path when the new base's view says what the
// blocks since start's tip spent (and the rules are ledger.Reapply's), the
// full path otherwise.
func (m *Mempool) newJudge(base *baseView, start *Snapshot, slot uint64) *judge {
	j := &judge{m: m, cand: rebuilding(base, start), slot: slot}
	if !m.ledgerRules {
		return j
	}
	ext, ok := base.utxo.(ExtensionView)
	if !ok {
		return j
	}
	if spent, ok := ext.SpentSince(start.Tip().Point); ok {
		j.carry = &carrier{old: start.lin, base: base.utxo, spent: spent, slot: slot, kept: make([]bool, 0, cap(j.cand.txs))}
	}
	return j
}

func (j *judge) path() SyncPath {
	if j.carry != nil {
		return SyncExtension
	}
	return SyncFull
}

// yieldEvery is how many txs a long CPU-bound pass reapplies between
// yields of its P: tens of µs each, so a waiting reader gets a P within
// about a millisecond. Carrying a tx costs well under a µs, so a carrying
// pass yields every carryYieldEvery.
const (
	yieldEvery      = 32
	carryYieldEvery = 1024
)

// run judges txs[from:], the next txs of start's lineage (txs a snapshot
// of it), in order, on top of the candidate; a tx found invalid is dropped
// and listed in r. A ledger read failure aborts: it says nothing about the
// tx. With yield (off the add lock) it gives up its P now and then: a sync
// is CPU-bound for up to seconds, and without yielding a reader that wants
// a P behind it (a tx-submission walk) waits for the scheduler's 10 ms
// preemption.
func (j *judge) run(ctx context.Context, txs []Entry, from int, r *SyncReport, yield bool) error {
	every := yieldEvery
	if j.carry != nil {
		every = carryYieldEvery
	}
	for i := range len(txs) - from {
		e := txs[from+i]
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if yield && i%every == every-1 {
			runtime.Gosched()
		}
		keep, err := j.valid(txs, from+i)
		if err != nil {
			return err
		}
		if !keep {
			r.Dropped, r.dropped = append(r.Dropped, e.Tx.Hash()), append(r.dropped, e.Tx)
			continue
		}
		j.cand.add(e)
	}
	r.Revalidated += len(txs) - from
	if j.carry != nil {
		r.ViewLookups = j.carry.reads
	}
	return nil
}

func (j *judge) valid(txs []Entry, pos int) (bool, error) {
	if j.carry != nil {
		return j.carry.judge(txs, pos)
	}
	e := txs[pos]
	_, err := j.m.opts.Reapply(j.m.opts.Params, j.cand.utxo(), j.slot, e.Tx)
	if err == nil {
		return true, nil
	}
	if !IsRejection(err) {
		return false, fmt.Errorf("mempool: sync: revalidating tx %s: %w", txName(e.Tx), err)
	}
	return false, nil
}
