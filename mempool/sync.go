package mempool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/leiosnode/leiosnode/block"
)

// SyncReport describes one Sync.
type SyncReport struct {
	Tip    block.Tip // the tip synced to
	Synced bool      // false: the tip had not changed, nothing was done
	// Revalidated is the number of txs the committed attempt reapplied:
	// the starting snapshot's, every delta round's and the residual.
	Revalidated int
	Rounds      int           // off-lock delta rounds
	Residual    int           // txs reapplied under the add lock
	Dropped     []block.Hash  // txs invalid at the new tip, in ticket order
	Restarts    int           // restarts caused by removals
	LockHeld    time.Duration // how long the commit held the add lock
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
		before := m.Snapshot()
		abandoned := m.abandonedSince(before.Tip())
		r, err := m.Sync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(abandoned) > 0 {
			m.giveBack(ctx, abandoned, before, r.Dropped)
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
// stays off the add lock. The result equals one full revalidation of the
// txs held at the commit, in ticket order, against the new tip.
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
		r := SyncReport{Tip: base.tip, Synced: true, Restarts: restarts}
		// The generation is read before the snapshot: a removal publishes
		// before it bumps the generation, so this snapshot includes every
		// removal up to gen.
		gen := m.removals.Load()
		start := m.Snapshot()
		cand := rebuilding(base, start)
		// The tallest tent pole: every tx of the snapshot, off the lock.
		if err := m.reapplyInto(ctx, cand, start.txs, slot, &r, true); err != nil {
			return r, err
		}
		done := start.LastTicket()
		if hook := m.opts.hooks.afterRevalidate; hook != nil {
			hook(0)
		}

		// Catch up with the adds made meanwhile, still off the lock. Adds pay
		// full validation, reapplication is cheaper: the delta shrinks.
		removed := false
		for r.Rounds < m.opts.SyncMaxRounds {
			if m.removals.Load() != gen {
				removed = true
				break
			}
			delta := m.Snapshot().after(done)
			if len(delta) <= m.opts.SyncDeltaCap {
				break
			}
			if err := m.reapplyInto(ctx, cand, delta, slot, &r, true); err != nil {
				return r, err
			}
			done = delta[len(delta)-1].Ticket
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
		if m.removals.Load() != gen {
			m.addLock.unlock()
			continue
		}
		held := time.Now()
		residual := m.Snapshot().after(done)
		r.Residual = len(residual)
		if err := m.reapplyInto(ctx, cand, residual, slot, &r, false); err != nil {
			m.addLock.unlock()
			return r, err
		}
		if hook := m.opts.hooks.underLock; hook != nil {
			hook()
		}
		m.publishLocked(cand.snapshot())
		r.LockHeld = time.Since(held)
		m.addLock.unlock()

		m.counters.syncs.Add(1)
		m.counters.droppedOnSync.Add(uint64(len(r.Dropped)))
		m.counters.noteLockHold(r.LockHeld)
		return r, nil
	}
}

// yieldEvery is how many txs a long CPU-bound pass reapplies between
// yields of its P: tens of µs each, so a waiting reader gets a P within
// about a millisecond.
const yieldEvery = 32

// reapplyInto reapplies entries, in order, on top of cand at slot; a tx a
// rule now refuses is dropped and listed in r. A ledger read failure aborts:
// it says nothing about the tx. With yield (off the add lock) it gives up
// its P every yieldEvery txs: a sync is CPU-bound for up to seconds, and
// without yielding a reader that wants a P behind it (a tx-submission
// walk) waits for the scheduler's 10 ms preemption.
func (m *Mempool) reapplyInto(ctx context.Context, cand *builder, entries []Entry, slot uint64, r *SyncReport, yield bool) error {
	for i, e := range entries {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if yield && i%yieldEvery == yieldEvery-1 {
			runtime.Gosched()
		}
		if _, err := m.opts.Reapply(m.opts.Params, cand.utxo(), slot, e.Tx); err != nil {
			if ruleOf(err) < 0 {
				return fmt.Errorf("mempool: sync: revalidating tx %s: %w", txName(e.Tx), err)
			}
			r.Dropped = append(r.Dropped, e.Tx.Hash())
			continue
		}
		cand.add(e)
	}
	r.Revalidated += len(entries)
	return nil
}
