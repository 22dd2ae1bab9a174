package mempool

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime/trace"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/bench/txchains"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network/txsubmission"
	"github.com/leiosnode/leiosnode/node"
)

// The two mempools under test.
const (
	mpDouble = "double-buffered"
	mpSingle = "single-lock"
)

// mpSubject is a mempool under load, as adders, readers and the chain see
// it.
type mpSubject interface {
	Add(ctx context.Context, tx *ledger.Tx) error
	// Txs is the forge's read: one snapshot's txs in order.
	Txs() iter.Seq[*ledger.Tx]
	// TxsAfter and Lookup are a tx-submission walk's reads: the ids after
	// a peer's cursor (appended to dst, as the tx-submission client keeps
	// its buffer), then the txs it asks for.
	TxsAfter(dst []txsubmission.MempoolTx, after uint64, max int) []txsubmission.MempoolTx
	Lookup(hash block.Hash) ([]byte, bool)
	// sync revalidates against the (new) tip; it returns how long it held
	// the lock readers or adds wait on.
	sync(ctx context.Context) (mpSyncStats, error)
	occupancy() (txs, bytes int)
	close()
}

type mpSyncStats struct {
	lockHeld time.Duration
	rounds   int // double-buffered only
	residual int // double-buffered only
}

// doubleBuffered is the mempool package, read as the node reads it: the
// forge through Txs, tx submission through the node's adapter.
type doubleBuffered struct {
	m     *mempool.Mempool
	serve txsubmission.Mempool
}

func (d doubleBuffered) Add(ctx context.Context, tx *ledger.Tx) error { return d.m.Add(ctx, tx) }
func (d doubleBuffered) Txs() iter.Seq[*ledger.Tx]                    { return d.m.Txs() }
func (d doubleBuffered) TxsAfter(dst []txsubmission.MempoolTx, after uint64, max int) []txsubmission.MempoolTx {
	return d.serve.TxsAfter(dst, after, max)
}
func (d doubleBuffered) Lookup(hash block.Hash) ([]byte, bool) { return d.serve.Lookup(hash) }
func (d doubleBuffered) close()                                { d.m.Close() }
func (d doubleBuffered) occupancy() (int, int) {
	s := d.m.Snapshot()
	return s.Len(), s.Bytes()
}

func (d doubleBuffered) sync(ctx context.Context) (mpSyncStats, error) {
	r, err := d.m.Sync(ctx)
	return mpSyncStats{lockHeld: r.LockHeld, rounds: r.Rounds, residual: r.Residual}, err
}

type singleLock struct{ *singleLockMempool }

func (s singleLock) close() {}

func (s singleLock) sync(context.Context) (mpSyncStats, error) {
	held, err := s.Sync()
	return mpSyncStats{lockHeld: held}, err
}

// newMPSubject returns a fresh mempool of kind on a fresh simulated ledger.
func newMPSubject(kind string, chains *txchains.Chains, costs *txchains.Costs) (mpSubject, *txchains.Ledger, error) {
	led := txchains.NewLedger(chains, costs)
	opts := mempool.Options{
		TipLedger:     led.TipLedger,
		Params:        ledger.DefaultParams(),
		Apply:         costs.ApplyFunc,
		Reapply:       costs.ReapplyFunc,
		CapacityBytes: mempool.DefaultCapacityBytes,
	}
	switch kind {
	case mpDouble:
		m, err := mempool.New(opts)
		if err != nil {
			return nil, nil, err
		}
		return doubleBuffered{m, node.TxSubmissionMempool(m)}, led, nil
	case mpSingle:
		m, err := newSingleLockMempool(opts)
		return singleLock{m}, led, err
	}
	return nil, nil, fmt.Errorf("unknown mempool %q", kind)
}

// The block limits of the forge's walks: the prototype's.
var (
	mpRBBodyBytes = consensus.DefaultLeiosParams().RBMaxBodyBytes
	mpEBLimits    = block.DefaultEBLimits
)

// mpServeWindow is how many ids a tx-submission walk reads at a time: the
// node's window of unacknowledged ids.
const mpServeWindow = 100

// mpLoad is the benchmark's concurrent load on one mempool.
type mpLoad struct {
	subject mpSubject
	led     *txchains.Ledger

	admitted  atomic.Int64
	exhausted atomic.Int64 // adders that ran out of txs

	mu          sync.Mutex // guards the samples below
	forgeStalls []time.Duration
	forgeWalks  []time.Duration
	serveStalls []time.Duration
	// controlStalls are the control walks' (server).
	controlStalls []time.Duration
	occupancies   []int // txs held when each block came
	blockTxs      int
	blocks        int
	syncs         int
	lockHold      time.Duration
	syncRounds    int
	residual      int // of the last sync
}

// adder submits txs, paced at one per interval from start+phase (0: as fast
// as the mempool takes them).
func (l *mpLoad) adder(ctx context.Context, txs []*ledger.Tx, start time.Time, interval, phase time.Duration) error {
	next := start.Add(phase)
	for _, tx := range txs {
		if interval > 0 && !txchains.SleepUntil(ctx, next) {
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

// forger walks the mempool as the forge does, every period: it opens the
// tip's ledger, takes one snapshot (the stall: how long that took) and
// selects the txs of an RB up to its body limit, reapplying each on the
// tip's ledger.
func (l *mpLoad) forger(ctx context.Context, start time.Time, period time.Duration) error {
	for next := start.Add(period / 2); txchains.SleepUntil(ctx, next); next = next.Add(period) {
		view, tip, release, err := l.led.TipLedger()
		if err != nil {
			return err
		}
		var txs iter.Seq[*ledger.Tx]
		var t0 time.Time
		var stall time.Duration
		trace.WithRegion(ctx, regionForgeSnapshot, func() {
			t0 = time.Now()
			txs = l.subject.Txs()
			stall = time.Since(t0)
		})
		forge.SelectTxs(ledger.DefaultParams(), view, tip.Point.Slot+1, txs, mpRBBodyBytes, block.EBLimits{})
		walk := time.Since(t0)
		release()
		l.mu.Lock()
		l.forgeStalls, l.forgeWalks = append(l.forgeStalls, stall), append(l.forgeWalks, walk)
		l.mu.Unlock()
	}
	return nil
}

// server walks the mempool as a tx-submission client serving one peer
// does, every period: the ids after its cursor, a window at a time, then
// each of those txs, as the peer asks for them. The stall is the time
// spent in those reads.
//
// Right after each walk the same goroutine times a control walk (see
// mpControlWalk). Each is a region of the execution trace (--trace).
func (l *mpLoad) server(ctx context.Context, start time.Time, period, phase time.Duration) error {
	var cursor uint64
	var stalls, controls []time.Duration
	var control mpControlWalk
	var txs []txsubmission.MempoolTx // the walk's buffer, as the client keeps one
	for next := start.Add(phase); txchains.SleepUntil(ctx, next); next = next.Add(period) {
		var stall, controlStall time.Duration
		trace.WithRegion(ctx, regionServeWalk, func() {
			t0 := time.Now()
			txs = l.subject.TxsAfter(txs[:0], cursor, mpServeWindow)
			for _, tx := range txs {
				l.subject.Lookup(tx.Hash)
			}
			stall = time.Since(t0)
		})
		control.hold(txs)
		found := 0
		trace.WithRegion(ctx, regionControlWalk, func() {
			t0 := time.Now()
			found = control.walk(cursor, mpServeWindow)
			controlStall = time.Since(t0)
		})
		if found != len(txs) {
			return fmt.Errorf("the control walk found %d of its %d txs", found, len(txs))
		}
		control.calibrate(len(txs), stall, controlStall)
		stalls, controls = append(stalls, stall), append(controls, controlStall)
		if len(txs) > 0 {
			cursor = txs[len(txs)-1].Ticket
		}
	}
	l.mu.Lock()
	l.serveStalls = append(l.serveStalls, stalls...)
	l.controlStalls = append(l.controlStalls, controls...)
	l.mu.Unlock()
	return nil
}

// mpControlWalk is the control of a tx-submission walk: the window the walk
// just read, held in a private slice and map that nothing else touches,
// read the same way (the window after the cursor, then each tx by hash),
// in the same goroutine, timed the same way. It repeats its reads so that
// it typically takes as long as the walk (the ratio of the two's median
// times over recent full windows): the two are equally exposed to what
// stalls any goroutine — the Go scheduler, garbage collection, the
// machine's other load — and the walk's excess over the control is the
// mempool's own. The control allocates nothing.
type mpControlWalk struct {
	txs    []txsubmission.MempoolTx
	byHash map[block.Hash]int
	window []txsubmission.MempoolTx

	reps int // repetitions of the reads a control walk does
	// walks and controls are recent full windows' walk and control (one
	// repetition) times, rings of mpControlSamples.
	walks, controls []time.Duration
	next            int
	scratch         []time.Duration // for medians, so calibrating allocates nothing
}

// mpControlSamples is how many recent full windows calibrate the control.
const mpControlSamples = 64

// hold replaces the private copy with txs (untimed).
func (c *mpControlWalk) hold(txs []txsubmission.MempoolTx) {
	if c.byHash == nil {
		c.byHash = make(map[block.Hash]int, mpServeWindow)
	}
	c.txs = append(c.txs[:0], txs...)
	clear(c.byHash)
	for i, tx := range c.txs {
		c.byHash[tx.Hash] = i
	}
}

// walk reads the private copy as the walk read the mempool, reps times;
// it returns how many txs one read found.
func (c *mpControlWalk) walk(after uint64, n int) int {
	found := 0
	for range max(c.reps, 1) {
		from := sort.Search(len(c.txs), func(i int) bool { return c.txs[i].Ticket > after })
		c.window = append(c.window[:0], c.txs[from:min(len(c.txs), from+n)]...)
		found = 0
		for _, tx := range c.window {
			if i, ok := c.byHash[tx.Hash]; ok && len(c.txs[i].Bytes) == tx.Size {
				found++
			}
		}
	}
	return found
}

// calibrate sets the repetitions from a walk of n txs and its control.
func (c *mpControlWalk) calibrate(n int, walk, control time.Duration) {
	if n < mpServeWindow {
		return // only full windows compare like with like
	}
	one := control / time.Duration(max(c.reps, 1))
	if len(c.walks) < mpControlSamples {
		c.walks, c.controls = append(c.walks, walk), append(c.controls, one)
	} else {
		c.walks[c.next], c.controls[c.next] = walk, one
		c.next = (c.next + 1) % mpControlSamples
	}
	median := func(ds []time.Duration) time.Duration {
		c.scratch = append(c.scratch[:0], ds...)
		slices.Sort(c.scratch)
		return c.scratch[len(c.scratch)/2]
	}
	c.reps = int(min(max(median(c.walks)/max(median(c.controls), 1), 1), 64))
}

// chain adopts a block every period, as the network would: an RB and the
// EB it announces, certified, forged from the mempool's latest snapshot by
// the forge's walk; then the mempool syncs to the new tip, which drops the
// block's txs.
func (l *mpLoad) chain(ctx context.Context, start time.Time, period time.Duration) error {
	for next := start.Add(period); txchains.SleepUntil(ctx, next); next = next.Add(period) {
		if err := l.adoptAndSync(ctx, true); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}

// adoptAndSync adopts one block (of the forge's selection, or empty) and
// syncs the mempool to it.
func (l *mpLoad) adoptAndSync(ctx context.Context, withTxs bool) error {
	held, _ := l.subject.occupancy()
	var txs []*ledger.Tx
	if withTxs {
		view, tip, release, err := l.led.TipLedger()
		if err != nil {
			return err
		}
		rb, eb := forge.SelectTxs(ledger.DefaultParams(), view, tip.Point.Slot+1, l.subject.Txs(), mpRBBodyBytes, mpEBLimits)
		release()
		txs = append(rb, eb...)
	}
	if err := l.led.Adopt(txs); err != nil {
		return err
	}
	st, err := l.subject.sync(ctx)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.occupancies = append(l.occupancies, held)
	l.blocks++
	l.blockTxs += len(txs)
	l.syncs++
	l.lockHold = max(l.lockHold, st.lockHeld)
	l.syncRounds += st.rounds
	l.residual = st.residual
	return nil
}

// mpStalls summarizes one kind of reader's stalls in a cell.
type mpStalls struct {
	Reads int   `json:"reads"`
	P50Ns int64 `json:"p50_ns"`
	P99Ns int64 `json:"p99_ns"`
	MaxNs int64 `json:"max_ns"`
	// Over1ms is how many reads took longer than the 1 ms target: rarer
	// than the max to be set by one unlucky moment of the machine.
	Over1ms int `json:"over_1ms"`
}

func newMPStalls(ds []time.Duration) mpStalls {
	if len(ds) == 0 {
		return mpStalls{}
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	at := func(q float64) int64 { return int64(ds[min(int(q*float64(len(ds))), len(ds)-1)]) }
	over := len(ds) - sort.Search(len(ds), func(i int) bool { return ds[i] > time.Millisecond })
	return mpStalls{Reads: len(ds), P50Ns: at(0.5), P99Ns: at(0.99), MaxNs: int64(ds[len(ds)-1]), Over1ms: over}
}

// mpCell is one cell of the matrix for one mempool.
type mpCell struct {
	Mempool    string `json:"mempool"`
	OfferedTxS int    `json:"offered_tx_s"`
	Peers      int    `json:"peers"`
	// MaxReaderStallNs is the longest any reader waited in the mempool's
	// calls: the forge's or a tx-submission walk's.
	MaxReaderStallNs int64    `json:"max_reader_stall_ns"`
	ForgeStall       mpStalls `json:"forge_stall"`
	ServeStall       mpStalls `json:"serve_stall"`
	// ControlStall is the control walks' (mpLoad.server): the same reads
	// on a private copy, in the same goroutines, timed the same way.
	ControlStall mpStalls `json:"control_stall"`
	// Machine is what the Go runtime and the machine did during the cell.
	Machine machine.Usage `json:"machine"`
	// ForgeWalkP50Ns and ForgeWalkMaxNs are the forge's whole walks:
	// snapshot, and every tx reapplied on the tip's ledger.
	ForgeWalkP50Ns int64   `json:"forge_walk_p50_ns"`
	ForgeWalkMaxNs int64   `json:"forge_walk_max_ns"`
	Admitted       int64   `json:"admitted"`
	ThroughputTxS  float64 `json:"throughput_tx_s"`
	// ExpectedTxS is min(offered, the serial validation ceiling); the
	// target is ThroughputTxS ≥ 95 % of it.
	ExpectedTxS float64 `json:"expected_tx_s"`
	// Blocks the chain adopted, the txs they took from the mempool, and the
	// syncs that followed them.
	Blocks   int `json:"blocks"`
	BlockTxs int `json:"block_txs"`
	Syncs    int `json:"syncs"`
	// Occupancy: txs held when each block came (max and mean), and at the
	// end.
	MaxOccupancyTxs   int     `json:"max_occupancy_txs"`
	MeanOccupancyTxs  float64 `json:"mean_occupancy_txs"`
	FinalOccupancyTxs int     `json:"final_occupancy_txs"`
	MaxSyncLockHoldNs int64   `json:"max_sync_lock_hold_ns"`
	SyncRounds        int     `json:"sync_rounds,omitempty"`
	ExhaustedAdders   int64   `json:"exhausted_adders,omitempty"`
}

// mpCellSettings are what a cell runs.
type mpCellSettings struct {
	offered, peers                         int
	duration, readPeriod, forgePeriod, tip time.Duration
}

// runMPCell runs the benchmark's set-up for its duration on a fresh
// mempool of kind: one adder and one tx-submission walk per peer, adders
// paced to the offered load in total, walks every readPeriod; the forge's
// walk every forgePeriod; a block adopted every tip period.
func runMPCell(ctx context.Context, kind string, chains *txchains.Chains, costs *txchains.Costs, cs mpCellSettings) (mpCell, error) {
	subject, led, err := newMPSubject(kind, chains, costs)
	if err != nil {
		return mpCell{}, err
	}
	defer subject.close()
	l := &mpLoad{subject: subject, led: led}
	ctx, task := trace.NewTask(ctx, fmt.Sprintf("%s %d tx/s × %d peers", kind, cs.offered, cs.peers))
	defer task.End()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	machineAtStart := machine.TakeSample()
	start := time.Now()
	interval := time.Duration(float64(time.Second) * float64(cs.peers) / float64(cs.offered))
	for j := range cs.peers {
		txs := chains.ForPeer(j, cs.peers)
		g.Go(func() error {
			return l.adder(gctx, txs, start, interval, interval*time.Duration(j)/time.Duration(cs.peers))
		})
		g.Go(func() error {
			return l.server(gctx, start, cs.readPeriod, cs.readPeriod*time.Duration(j)/time.Duration(cs.peers))
		})
	}
	g.Go(func() error { return l.forger(gctx, start, cs.forgePeriod) })
	g.Go(func() error { return l.chain(gctx, start, cs.tip) })

	cell := mpCell{Mempool: kind, OfferedTxS: cs.offered, Peers: cs.peers}
	if txchains.SleepUntil(gctx, start.Add(cs.duration)) {
		cell.Admitted = l.admitted.Load() // adds finishing after the end do not count
	}
	elapsed := time.Since(start)
	cell.Machine = machine.TakeSample().Since(machineAtStart)
	cancel()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return mpCell{}, err
	}
	cell.ThroughputTxS = float64(cell.Admitted) / elapsed.Seconds()
	cell.ForgeStall, cell.ServeStall = newMPStalls(l.forgeStalls), newMPStalls(l.serveStalls)
	cell.ControlStall = newMPStalls(l.controlStalls)
	cell.MaxReaderStallNs = max(cell.ForgeStall.MaxNs, cell.ServeStall.MaxNs)
	walks := newMPStalls(l.forgeWalks)
	cell.ForgeWalkP50Ns, cell.ForgeWalkMaxNs = walks.P50Ns, walks.MaxNs
	cell.Blocks, cell.BlockTxs, cell.Syncs = l.blocks, l.blockTxs, l.syncs
	for _, n := range l.occupancies {
		cell.MaxOccupancyTxs = max(cell.MaxOccupancyTxs, n)
		cell.MeanOccupancyTxs += float64(n) / float64(len(l.occupancies))
	}
	cell.FinalOccupancyTxs, _ = subject.occupancy()
	cell.MaxSyncLockHoldNs = int64(l.lockHold)
	cell.SyncRounds = l.syncRounds
	cell.ExhaustedAdders = l.exhausted.Load()
	return cell, nil
}

// measureCeiling is the serial validation ceiling: n adds back to back from
// one goroutine into a fresh double-buffered mempool, nothing else running;
// the median of runs such runs, so that one slowed by the machine's other
// work does not set it.
func measureCeiling(ctx context.Context, chains *txchains.Chains, costs *txchains.Costs, n, runs int) (float64, error) {
	txs := chains.ForPeer(0, 1)
	n = min(n, len(txs))
	rates := make([]float64, runs)
	for i := range rates {
		subject, _, err := newMPSubject(mpDouble, chains, costs)
		if err != nil {
			return 0, err
		}
		start := time.Now()
		for _, tx := range txs[:n] {
			if err := subject.Add(ctx, tx); err != nil {
				subject.close()
				return 0, err
			}
		}
		rates[i] = float64(n) / time.Since(start).Seconds()
		subject.close()
	}
	slices.Sort(rates)
	return rates[runs/2], nil
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
// to fill fast), then runs two unpaced adders and tx-submission walks, and
// after a warm-up one sync to a tip that invalidates nothing, whose lock
// hold it reports.
func runMPHold(ctx context.Context, kind string, chains *txchains.Chains, costs *txchains.Costs, held, readers int, readPeriod, warmUp time.Duration) (mpHold, error) {
	subject, led, err := newMPSubject(kind, chains, costs)
	if err != nil {
		return mpHold{}, err
	}
	defer subject.close()
	// Fill with whole chains from the front, the adders take the chains
	// after them.
	applyCost := costs.Apply.Swap(0)
	filled, next := 0, 0
	for ; next < len(chains.Txs) && filled < held; next++ {
		for _, tx := range chains.Txs[next] {
			if filled == held {
				break
			}
			if err := subject.Add(ctx, tx); err != nil {
				costs.Apply.Store(applyCost)
				return mpHold{}, fmt.Errorf("filling: %w", err)
			}
			filled++
		}
	}
	costs.Apply.Store(applyCost)
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
		for c := next + a; c < len(chains.Txs); c += 2 {
			txs = append(txs, chains.Txs[c]...)
		}
		g.Go(func() error { return l.adder(gctx, txs, start, 0, 0) })
	}
	walkers := &mpLoad{subject: subject, led: led} // their stalls, during the sync only
	var walks sync.WaitGroup
	h := mpHold{Mempool: kind}
	if txchains.SleepUntil(gctx, start.Add(warmUp)) {
		h.HeldTxs, _ = subject.occupancy()
		before := l.admitted.Load()
		walkCtx, stopWalks := context.WithCancel(gctx)
		for j := range readers {
			walks.Go(func() {
				_ = walkers.server(walkCtx, time.Now(), readPeriod, readPeriod*time.Duration(j)/time.Duration(readers))
			})
		}
		t0 := time.Now()
		err := l.adoptAndSync(gctx, false)
		h.SyncNs = int64(time.Since(t0))
		// A walk that waited out the sync records its wait when it gets
		// through: give every walk one more period.
		txchains.SleepUntil(gctx, time.Now().Add(readPeriod))
		stopWalks()
		walks.Wait()
		if err != nil {
			cancel()
			_ = g.Wait()
			return mpHold{}, err
		}
		h.LockHeldNs, h.Rounds, h.Residual = int64(l.lockHold), l.syncRounds, l.residual
		h.AddedDuringSync = l.admitted.Load() - before
		h.MaxReaderStallNs = newMPStalls(walkers.serveStalls).MaxNs
	}
	cancel()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return mpHold{}, err
	}
	return h, nil
}
