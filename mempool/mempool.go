package mempool

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// Mempool is the double-buffered mempool. Its methods are safe for
// concurrent use.
type Mempool struct {
	opts Options

	// current is the latest snapshot. Written only under addLock; read by
	// anyone, without a lock.
	current atomic.Pointer[Snapshot]

	// addLock serializes, in arrival order, everything that publishes a
	// snapshot: adds, removals and the commit of a sync. It guards
	// nextTicket, roomFreed and the rejected set's ring, and is never held
	// while waiting for room.
	addLock    fifoLock
	nextTicket uint64        // guarded by addLock
	roomFreed  chan struct{} // guarded by addLock; closed (and replaced) when the byte total drops

	// published is closed (and replaced) after every publish, so readers
	// waiting for news (a tx-submission client with nothing to offer) wake
	// without polling. Swapped under addLock; loaded by anyone.
	published atomic.Pointer[chan struct{}]

	// removals is the removal generation: bumped under addLock after a
	// removal published its snapshot, read by a sync off the lock.
	removals atomic.Uint64

	// syncMu lets one sync run at a time. Lock order: syncMu, then addLock.
	syncMu sync.Mutex

	// ledgerRules: Reapply is ledger.Reapply, whose reasoning the extension
	// path of a sync relies on.
	ledgerRules bool
	// ledgerApply: Apply is ledger.Apply, so AddTxs may verify the
	// signatures ahead (ledger.VerifySignatures) and apply the rest with
	// ledger.ApplyVerified, reaching its verdicts.
	ledgerApply bool

	rejected *rejectedSet
	awaiting *awaiting // under the add lock
	counters counters
}

// New returns an empty mempool validated against the current tip's ledger.
func New(opts Options) (*Mempool, error) {
	if opts.TipLedger == nil {
		return nil, errors.New("mempool: Options.TipLedger is required")
	}
	ledgerRules, ledgerApply := opts.Reapply == nil, opts.Apply == nil
	opts = opts.withDefaults()
	view, tip, release, err := opts.TipLedger()
	if err != nil {
		return nil, fmt.Errorf("mempool: reading the tip's ledger: %w", err)
	}
	m := &Mempool{
		opts:        opts,
		ledgerRules: ledgerRules,
		ledgerApply: ledgerApply,
		addLock:     newFIFOLock(),
		nextTicket:  1,
		roomFreed:   make(chan struct{}),
		rejected:    newRejectedSet(opts.RejectedMemory),
		awaiting:    newAwaiting(opts.RejectedMemory, opts.CapacityBytes/8),
	}
	m.current.Store(newBuilder(&baseView{utxo: view, tip: tip, release: release}, 0, 0).snapshot())
	published := make(chan struct{})
	m.published.Store(&published)
	if opts.Registerer != nil {
		if err := m.registerMetrics(opts.Registerer); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// Close releases the ledger view the latest snapshot reads. Call it once
// Run and every other caller are done.
func (m *Mempool) Close() { m.current.Load().lin.base.close() }

// Snapshot returns the latest state. It never blocks and takes no lock.
func (m *Mempool) Snapshot() *Snapshot { return m.current.Load() }

// Has reports whether the latest snapshot holds the tx with this hash —
// admitted, so fully validated, signatures included. It takes no lock.
func (m *Mempool) Has(txHash block.Hash) bool { return m.Snapshot().Has(txHash) }

// Tx returns the admitted tx with this hash from the latest snapshot. It
// takes no lock.
func (m *Mempool) Tx(txHash block.Hash) (*ledger.Tx, bool) {
	e, ok := m.Snapshot().Lookup(txHash)
	return e.Tx, ok
}

// Since yields the entries of the latest snapshot, taken at the call, whose
// ticket is after ticket, in ticket order: a follower of admissions reads
// what is new with it. It never blocks.
func (m *Mempool) Since(ticket uint64) iter.Seq[Entry] { return m.Snapshot().After(ticket) }

// Txs yields the txs of the latest snapshot, taken at the call, in ticket
// order: the forge's walk. Like Snapshot, it never blocks.
func (m *Mempool) Txs() iter.Seq[*ledger.Tx] {
	s := m.Snapshot()
	return func(yield func(*ledger.Tx) bool) {
		for _, e := range s.txs {
			if !yield(e.Tx) {
				return
			}
		}
	}
}

// Changed returns a channel that is closed when a snapshot newer than the
// current one is published. Load it before reading the snapshot, so no
// publish is missed in between.
func (m *Mempool) Changed() <-chan struct{} { return *m.published.Load() }

// CapacityBytes is the bound on the byte total of the txs held.
func (m *Mempool) CapacityBytes() int { return m.opts.CapacityBytes }

// RecentlyRejected reports whether a tx with this hash was refused by a
// ledger rule recently (among the last Options.RejectedMemory rejections).
// It takes no lock.
func (m *Mempool) RecentlyRejected(txHash block.Hash) bool { return m.rejected.has(txHash) }

// Stats returns the counters since New.
func (m *Mempool) Stats() Stats { return m.counters.stats() }

// Add validates tx fully against the latest snapshot and admits it.
//
// Adds are served in arrival order. If the mempool lacks room, Add waits
// for it (backpressure, what a peer's tx-submission wants); if ctx ends
// first, the error wraps ErrFull and ctx's error (a local submit passes a
// ctx with a timeout). A tx larger than the whole capacity gets ErrFull at
// once; if ctx ends while the add waits for its turn, the error wraps
// ErrBusy. A tx already held gets ErrDuplicate; a tx a ledger rule refuses
// gets an error wrapping that rule's sentinel (IsRejection), and is
// remembered for RecentlyRejected — unless all it lacked were inputs that
// may yet come (inputsMayYetCome), whose submitter may send it again.
// Errors name the tx by its tx id.
func (m *Mempool) Add(ctx context.Context, tx *ledger.Tx) error {
	return m.add(ctx, tx, m.opts.Apply, false)
}

// AddTxs adds txs that arrived together (a tx-submission reply, a batch of
// submits), in order, each as Add adds it, and returns each one's error
// (nil: admitted): the same txs are admitted and refused, for the same
// reasons, as by calling Add for each.
//
// The witness signatures of the txs not held already are verified first,
// together (ledger.VerifySignatures: spread over the cores, a key signing
// several of them expanded once) and off the add lock, which adds then hold
// only for the rules that read the UTxO. A tx held already costs no
// verification. With an Options.Apply of the caller's, each tx is
// validated with it, as by Add.
//
// Once an add fails with ctx ended (no room in time, no turn in time), the
// txs after it are not tried: each gets an error wrapping ErrBusy and ctx's
// error. A caller that stops at the first such failure, as tx submission
// does, sees what it saw adding one by one.
func (m *Mempool) AddTxs(ctx context.Context, txs []*ledger.Tx) []error {
	return m.addTxs(ctx, txs, false)
}

// AddRelayed is AddTxs for txs a peer relayed, which no peer offers twice:
// a tx refused only for inputs that may yet come (inputsMayYetCome) awaits
// them, and is admitted when a tx or a block brings them. A local
// submitter got its answer and sends the tx again itself.
func (m *Mempool) AddRelayed(ctx context.Context, txs []*ledger.Tx) []error {
	return m.addTxs(ctx, txs, true)
}

func (m *Mempool) addTxs(ctx context.Context, txs []*ledger.Tx, relayed bool) []error {
	errs := make([]error, len(txs))
	var ended error
	add := func(i int, tx *ledger.Tx, validate ValidateFunc) {
		if ended != nil {
			errs[i] = fmt.Errorf("%w: tx %s not tried: %w", ErrBusy, txName(tx), ended)
			return
		}
		if errs[i] = m.add(ctx, tx, validate, relayed); errs[i] != nil && ctx.Err() != nil {
			ended = ctx.Err()
		}
	}
	if !m.ledgerApply {
		for i, tx := range txs {
			add(i, tx, m.opts.Apply)
		}
		return errs
	}
	s := m.Snapshot()
	fresh := make([]*ledger.Tx, 0, len(txs))
	for _, tx := range txs {
		if !s.Has(tx.Hash()) {
			fresh = append(fresh, tx)
		}
	}
	verdicts := ledger.VerifySignatures(fresh)
	for i, tx := range txs {
		validate := m.opts.Apply
		if len(verdicts) > 0 && verdicts[0].Tx() == tx {
			sigs := verdicts[0]
			verdicts = verdicts[1:]
			validate = func(p ledger.Params, utxo ledger.UTxO, slot uint64, _ *ledger.Tx) (*ledger.Diff, error) {
				return ledger.ApplyVerified(p, utxo, slot, sigs)
			}
		}
		add(i, tx, validate)
	}
	return errs
}

// add is Add, validating tx with validate: Apply for a new tx, Reapply for
// one this node validated before (a tx it gives back after a rollback). A
// relayed tx may await its inputs.
func (m *Mempool) add(ctx context.Context, tx *ledger.Tx, validate ValidateFunc, relayed bool) error {
	if err := m.duplicate(m.Snapshot(), tx); err != nil {
		return err
	}
	if tx.Size() > m.opts.CapacityBytes {
		return fmt.Errorf("%w: tx %s of %d bytes exceeds the capacity of %d", ErrFull, txName(tx), tx.Size(), m.opts.CapacityBytes)
	}
	for {
		if err := m.addLock.lock(ctx); err != nil {
			return fmt.Errorf("%w: %w", ErrBusy, err)
		}
		room, err := m.addLocked(tx, validate, relayed)
		if room == nil && err == nil {
			m.admitAwaitingLocked(tx)
		}
		m.addLock.unlock()
		if room == nil {
			return err
		}
		select {
		case <-room:
		case <-ctx.Done():
			s := m.Snapshot()
			return fmt.Errorf("%w (%d of %d bytes used, tx %s of %d bytes): %w", ErrFull, s.Bytes(), m.opts.CapacityBytes, txName(tx), tx.Size(), ctx.Err())
		}
	}
}

// duplicate returns ErrDuplicate if s holds tx. Another tx of its id (the
// same body, other witnesses) is not a duplicate: the ledger refuses it,
// its inputs being spent, and it is remembered as rejected.
func (m *Mempool) duplicate(s *Snapshot, tx *ledger.Tx) error {
	if !s.Has(tx.Hash()) {
		return nil
	}
	m.counters.duplicates.Add(1)
	return fmt.Errorf("%w: tx %s", ErrDuplicate, txName(tx))
}

// inputsMayYetCome returns the inputs tx lacked if it was refused only for
// inputs that no tx the mempool holds spends: its parent may be on its way
// from another peer, or given back after a rollback. Such a tx is not
// remembered as rejected; relayed, it is held aside until they come
// (awaiting). Remembered, one child refused in the instant between a
// rollback's sync and its giveBack cut every later tx of its chain off
// this node for as long as the chain kept a backlog, no peer offering it
// again. An input a held tx spends is a conflict, remembered.
func inputsMayYetCome(s *Snapshot, tx *ledger.Tx, err error) []ledger.TxIn {
	if !errors.Is(err, ledger.ErrInputNotInUTxO) {
		return nil
	}
	var missing []ledger.TxIn
	utxo := s.UTxO()
	for _, in := range tx.Inputs {
		if _, spent := s.lin.spentPos(s.txs, in); spent {
			return nil
		}
		if _, ok, err := utxo.Lookup(in); err == nil && !ok {
			missing = append(missing, in)
		}
	}
	return missing
}

// admitAwaitingLocked admits, under the add lock, the txs that awaited an
// output of parent, just admitted, and then those that awaited theirs.
// Each is validated in full, as a new tx; one that still lacks an input
// awaits again, one without room is dropped.
func (m *Mempool) admitAwaitingLocked(parent *ledger.Tx) {
	m.admitLocked(m.awaiting.childrenOf(parent.ID()))
}

// admitFoundLocked admits, under the add lock, the txs that awaited inputs
// the latest snapshot's UTxO now has: their parents reached the chain.
func (m *Mempool) admitFoundLocked() {
	m.admitLocked(m.awaiting.found(m.Snapshot().UTxO()))
}

func (m *Mempool) admitLocked(txs []*ledger.Tx) {
	for len(txs) > 0 {
		tx := txs[0]
		txs = txs[1:]
		if room, err := m.addLocked(tx, m.opts.Apply, true); room == nil && err == nil {
			m.counters.awaited.Add(1)
			txs = append(txs, m.awaiting.childrenOf(tx.ID())...)
		}
	}
}

// txName is how errors and logs name a tx: by its tx id (the hash of its
// body), as the submit API answers and Cardano's tools name it, never by
// the hash of the whole tx that EBs and the tx cache use.
func txName(tx *ledger.Tx) block.Hash { return tx.ID() }

// addLocked admits tx if there is room, under the add lock. With no room it
// returns the channel that is closed when room is freed.
func (m *Mempool) addLocked(tx *ledger.Tx, validate ValidateFunc, relayed bool) (<-chan struct{}, error) {
	s := m.Snapshot()
	if err := m.duplicate(s, tx); err != nil {
		return nil, err
	}
	if s.Bytes()+tx.Size() > m.opts.CapacityBytes {
		return m.roomFreed, nil
	}
	if _, err := validate(m.opts.Params, s.UTxO(), m.slotFor(s.lin.base), tx); err != nil {
		if rule, ok := ledger.RuleOf(err); ok {
			if missing := inputsMayYetCome(s, tx, err); len(missing) == 0 {
				m.rejected.remember(tx.Hash())
			} else if relayed {
				m.awaiting.hold(tx, missing)
			}
			m.counters.rejected[rule.Index()].Add(1)
		}
		return nil, fmt.Errorf("mempool: tx %s: %w", txName(tx), err)
	}
	b := extending(s)
	b.add(Entry{Ticket: m.nextTicket, Tx: tx, Admitted: m.opts.Now()})
	m.nextTicket++
	m.publishLocked(b.snapshot())
	m.counters.added.Add(1)
	return nil, nil
}

// publishLocked makes next the latest snapshot; under the add lock. Waiters
// for room are woken if the byte total dropped, and a ledger view no longer
// read is released.
func (m *Mempool) publishLocked(next *Snapshot) {
	prev := m.current.Swap(next)
	fresh := make(chan struct{})
	close(*m.published.Swap(&fresh))
	if next.bytes < prev.bytes {
		close(m.roomFreed)
		m.roomFreed = make(chan struct{})
	}
	if prev.lin.base != next.lin.base {
		prev.lin.base.close()
	}
}

// slotFor is the slot txs are validated for against base.
func (m *Mempool) slotFor(base *baseView) uint64 {
	if m.opts.Slot != nil {
		return m.opts.Slot()
	}
	return base.tip.Point.Slot + 1
}

// RemoveTxs drops the txs with these hashes, even if valid (a forged block
// the chain did not adopt), and the txs that spent their outputs. It
// returns the hashes of every tx dropped, in ticket order. A sync running
// meanwhile restarts, so the removal is never undone.
//
// It reapplies the remaining txs under the add lock: removals are rare.
func (m *Mempool) RemoveTxs(ctx context.Context, txHashes []block.Hash) ([]block.Hash, error) {
	if err := m.addLock.lock(ctx); err != nil {
		return nil, err
	}
	defer m.addLock.unlock()
	s := m.Snapshot()
	named := make(map[block.Hash]struct{}, len(txHashes))
	for _, h := range txHashes {
		if s.Has(h) {
			named[h] = struct{}{}
		}
	}
	if len(named) == 0 {
		return nil, nil
	}
	b := rebuilding(s.lin.base, s)
	var dropped []block.Hash
	slot := m.slotFor(s.lin.base)
	for _, e := range s.txs {
		h := block.Hash(e.Tx.Hash())
		if _, ok := named[h]; ok {
			dropped = append(dropped, h)
			continue
		}
		if _, err := m.opts.Reapply(m.opts.Params, b.utxo(), slot, e.Tx); err != nil {
			if !IsRejection(err) {
				return nil, fmt.Errorf("mempool: removing txs: revalidating tx %s: %w", txName(e.Tx), err)
			}
			dropped = append(dropped, h)
			continue
		}
		b.add(e)
	}
	m.publishLocked(b.snapshot())
	// After the publish: a sync that reads this generation then loads the
	// snapshot sees the removal.
	m.removals.Add(1)
	m.counters.removed.Add(uint64(len(dropped)))
	return dropped, nil
}
