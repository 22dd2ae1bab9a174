package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// The two mempools under test.
const (
	mpDouble = "double-buffered"
	mpSingle = "single-lock"
)

// mpSubject is a mempool under load, as adders, readers and the syncer see
// it.
type mpSubject interface {
	Add(ctx context.Context, tx *ledger.Tx) error
	// read takes a snapshot, as a tx-submission server or the forge does.
	read()
	// sync revalidates against the (new) tip; it returns how long it held
	// the lock readers or adds wait on.
	sync(ctx context.Context) (mpSyncStats, error)
	occupancy() (txs, bytes int)
}

type mpSyncStats struct {
	lockHeld time.Duration
	rounds   int // double-buffered only
	residual int // double-buffered only
}

type doubleBuffered struct{ m *mempool.Mempool }

func (d doubleBuffered) Add(ctx context.Context, tx *ledger.Tx) error { return d.m.Add(ctx, tx) }
func (d doubleBuffered) read()                                        { _ = d.m.Snapshot().Len() }
func (d doubleBuffered) occupancy() (int, int) {
	s := d.m.Snapshot()
	return s.Len(), s.Bytes()
}

func (d doubleBuffered) sync(ctx context.Context) (mpSyncStats, error) {
	r, err := d.m.Sync(ctx)
	return mpSyncStats{lockHeld: r.LockHeld, rounds: r.Rounds, residual: r.Residual}, err
}

type singleLock struct{ m *singleLockMempool }

func (s singleLock) Add(ctx context.Context, tx *ledger.Tx) error { return s.m.Add(ctx, tx) }
func (s singleLock) read()                                        { _ = len(s.m.Snapshot()) }
func (s singleLock) occupancy() (int, int)                        { return s.m.occupancy() }

func (s singleLock) sync(context.Context) (mpSyncStats, error) {
	held, err := s.m.Sync()
	return mpSyncStats{lockHeld: held}, err
}

// newMPSubject returns a fresh mempool of kind on a fresh simulated ledger.
func newMPSubject(kind string, chains *mpChains, costs *mpCosts) (mpSubject, *mpLedger, error) {
	led := newMPLedger(chains.genesis, costs)
	opts := mempool.Options{
		TipLedger:     led.TipLedger,
		Params:        ledger.DefaultParams(),
		Apply:         costs.applyFunc,
		Reapply:       costs.reapplyFunc,
		CapacityBytes: mempool.DefaultCapacityBytes,
	}
	switch kind {
	case mpDouble:
		m, err := mempool.New(opts)
		return doubleBuffered{m}, led, err
	case mpSingle:
		m, err := newSingleLockMempool(opts)
		return singleLock{m}, led, err
	}
	return nil, nil, fmt.Errorf("unknown mempool %q", kind)
}

// maxDuration is a running maximum, safe for concurrent use.
type maxDuration struct{ ns atomic.Int64 }

func (m *maxDuration) note(d time.Duration) {
	for {
		old := m.ns.Load()
		if int64(d) <= old || m.ns.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

func (m *maxDuration) get() time.Duration { return time.Duration(m.ns.Load()) }

// sleepUntil sleeps until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// mpLoad is the benchmark's concurrent load on one mempool.
type mpLoad struct {
	subject mpSubject
	led     *mpLedger

	admitted   atomic.Int64
	exhausted  atomic.Int64 // adders that ran out of txs
	readStall  maxDuration
	reads      atomic.Int64
	syncs      atomic.Int64
	lockHold   maxDuration
	syncRounds atomic.Int64
}

// adder submits txs, paced at one per interval from start+phase (0: as fast
// as the mempool takes them).
func (l *mpLoad) adder(ctx context.Context, txs []*ledger.Tx, start time.Time, interval, phase time.Duration) error {
	next := start.Add(phase)
	for _, tx := range txs {
		if interval > 0 && !sleepUntil(ctx, next) {
			return nil
		}
		if err := l.subject.Add(ctx, tx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("adder: %w", err)
		}
		l.admitted.Add(1)
		next = next.Add(interval)
	}
	l.exhausted.Add(1)
	return nil
}

// reader takes a snapshot every period and records the longest wait.
func (l *mpLoad) reader(ctx context.Context, start time.Time, period, phase time.Duration) error {
	for next := start.Add(phase); sleepUntil(ctx, next); next = next.Add(period) {
		t0 := time.Now()
		l.subject.read()
		l.readStall.note(time.Since(t0))
		l.reads.Add(1)
	}
	return nil
}

// syncer moves the tip every period and syncs the mempool to it.
func (l *mpLoad) syncer(ctx context.Context, start time.Time, period time.Duration) error {
	for next := start.Add(period); sleepUntil(ctx, next); next = next.Add(period) {
		if err := l.syncOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}

func (l *mpLoad) syncOnce(ctx context.Context) error {
	l.led.advance()
	st, err := l.subject.sync(ctx)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	l.syncs.Add(1)
	l.lockHold.note(st.lockHeld)
	l.syncRounds.Add(int64(st.rounds))
	return nil
}

// mpCell is one cell of the matrix for one mempool.
type mpCell struct {
	Mempool          string  `json:"mempool"`
	OfferedTxS       int     `json:"offered_tx_s"`
	Peers            int     `json:"peers"`
	MaxReaderStallNs int64   `json:"max_reader_stall_ns"`
	Reads            int64   `json:"reads"`
	Admitted         int64   `json:"admitted"`
	ThroughputTxS    float64 `json:"throughput_tx_s"`
	// ExpectedTxS is min(offered, the serial validation ceiling); the
	// target is ThroughputTxS ≥ 95 % of it.
	ExpectedTxS       float64 `json:"expected_tx_s"`
	OccupancyTxs      int     `json:"final_occupancy_txs"`
	OccupancyBytes    int     `json:"final_occupancy_bytes"`
	Syncs             int64   `json:"syncs"`
	MaxSyncLockHoldNs int64   `json:"max_sync_lock_hold_ns"`
	SyncRounds        int64   `json:"sync_rounds,omitempty"`
	ExhaustedAdders   int64   `json:"exhausted_adders,omitempty"`
}

// runMPCell runs the benchmark's set-up for d on a fresh mempool of kind: one
// adder and one reader per peer, adders paced to offered tx/s in total,
// readers every readPeriod, a tip change every syncPeriod.
func runMPCell(ctx context.Context, kind string, chains *mpChains, costs *mpCosts, offered, peers int, d, readPeriod, syncPeriod time.Duration) (mpCell, error) {
	subject, led, err := newMPSubject(kind, chains, costs)
	if err != nil {
		return mpCell{}, err
	}
	l := &mpLoad{subject: subject, led: led}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	interval := time.Duration(float64(time.Second) * float64(peers) / float64(offered))
	for j := range peers {
		txs := chains.forPeer(j, peers)
		g.Go(func() error {
			return l.adder(gctx, txs, start, interval, interval*time.Duration(j)/time.Duration(peers))
		})
		g.Go(func() error {
			return l.reader(gctx, start, readPeriod, readPeriod*time.Duration(j)/time.Duration(peers))
		})
	}
	g.Go(func() error { return l.syncer(gctx, start, syncPeriod) })

	cell := mpCell{Mempool: kind, OfferedTxS: offered, Peers: peers}
	if sleepUntil(gctx, start.Add(d)) {
		cell.Admitted = l.admitted.Load() // adds finishing after the end do not count
	}
	elapsed := time.Since(start)
	cancel()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return mpCell{}, err
	}
	cell.ThroughputTxS = float64(cell.Admitted) / elapsed.Seconds()
	cell.MaxReaderStallNs = int64(l.readStall.get())
	cell.Reads = l.reads.Load()
	cell.OccupancyTxs, cell.OccupancyBytes = subject.occupancy()
	cell.Syncs = l.syncs.Load()
	cell.MaxSyncLockHoldNs = int64(l.lockHold.get())
	cell.SyncRounds = l.syncRounds.Load()
	cell.ExhaustedAdders = l.exhausted.Load()
	if d, ok := subject.(doubleBuffered); ok {
		d.m.Close()
	}
	return cell, nil
}

// measureCeiling is the serial validation ceiling: n adds back to back from
// one goroutine into a fresh double-buffered mempool, nothing else running.
func measureCeiling(ctx context.Context, chains *mpChains, costs *mpCosts, n int) (float64, error) {
	subject, _, err := newMPSubject(mpDouble, chains, costs)
	if err != nil {
		return 0, err
	}
	defer subject.(doubleBuffered).m.Close()
	txs := chains.forPeer(0, 1)
	n = min(n, len(txs))
	start := time.Now()
	for _, tx := range txs[:n] {
		if err := subject.Add(ctx, tx); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// mpHold is one sync at a given occupancy, with adds running at the
// ceiling meanwhile.
type mpHold struct {
	Mempool          string `json:"mempool"`
	HeldTxs          int    `json:"held_txs"` // when the sync started
	LockHeldNs       int64  `json:"lock_held_ns"`
	SyncNs           int64  `json:"sync_ns"`
	Rounds           int    `json:"rounds,omitempty"`
	Residual         int    `json:"residual,omitempty"`
	MaxReaderStallNs int64  `json:"max_reader_stall_ns"`
	AddedDuringSync  int64  `json:"added_during_sync"`
}

// runMPHold fills a fresh mempool of kind with held txs (the apply cost off,
// to fill fast), then runs two unpaced adders and readers, and after a
// warm-up one sync, whose lock hold it reports.
func runMPHold(ctx context.Context, kind string, chains *mpChains, costs *mpCosts, held, readers int, readPeriod, warmUp time.Duration) (mpHold, error) {
	subject, led, err := newMPSubject(kind, chains, costs)
	if err != nil {
		return mpHold{}, err
	}
	if d, ok := subject.(doubleBuffered); ok {
		defer d.m.Close()
	}
	// Fill with whole chains from the front, the adders take the chains
	// after them.
	applyCost := costs.apply.Swap(0)
	filled, next := 0, 0
	for ; next < len(chains.chains) && filled < held; next++ {
		for _, tx := range chains.chains[next] {
			if filled == held {
				break
			}
			if err := subject.Add(ctx, tx); err != nil {
				costs.apply.Store(applyCost)
				return mpHold{}, fmt.Errorf("filling: %w", err)
			}
			filled++
		}
	}
	costs.apply.Store(applyCost)
	if filled < held {
		return mpHold{}, fmt.Errorf("only %d txs to fill %d", filled, held)
	}

	l := &mpLoad{subject: subject, led: led}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	for a := range 2 {
		var txs []*ledger.Tx
		for c := next + a; c < len(chains.chains); c += 2 {
			txs = append(txs, chains.chains[c]...)
		}
		g.Go(func() error { return l.adder(gctx, txs, start, 0, 0) })
	}
	for j := range readers {
		g.Go(func() error {
			return l.reader(gctx, start, readPeriod, readPeriod*time.Duration(j)/time.Duration(readers))
		})
	}
	h := mpHold{Mempool: kind}
	if sleepUntil(gctx, start.Add(warmUp)) {
		h.HeldTxs, _ = subject.occupancy()
		before := l.admitted.Load()
		l.readStall.ns.Store(0) // the stall during the sync only
		led.advance()
		t0 := time.Now()
		st, err := subject.sync(gctx)
		h.SyncNs = int64(time.Since(t0))
		if err != nil {
			cancel()
			_ = g.Wait()
			return mpHold{}, fmt.Errorf("sync: %w", err)
		}
		h.LockHeldNs, h.Rounds, h.Residual = int64(st.lockHeld), st.rounds, st.residual
		h.AddedDuringSync = l.admitted.Load() - before
		// A reader that waited out the sync records its wait when it gets
		// through: give every reader one more period.
		sleepUntil(gctx, time.Now().Add(readPeriod))
		h.MaxReaderStallNs = int64(l.readStall.get())
	}
	cancel()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return mpHold{}, err
	}
	return h, nil
}
