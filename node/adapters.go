package node

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync/atomic"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// countingChain is the chain database with the node's count of blocks that
// changed the selection when added, whoever added them.
type countingChain struct {
	db      *chaindb.DB
	adopted *atomic.Uint64
}

func (c countingChain) add(blk *block.Block) (chaindb.AddResult, error) {
	res, err := c.db.AddBlock(blk)
	if res.Adopted {
		c.adopted.Add(1)
	}
	return res, err
}

// chainAdapter presents the chain database as chain sync and block fetch
// use it: Go matches method signatures exactly, and chaindb returns its own
// concrete types. A CertRB chain sync adds has its certified closure
// fetched as it arrives (leios.Pipeline.FetchAhead).
type chainAdapter struct {
	countingChain
	leios *leios.Pipeline
	// applied, if set, is told how long each block took to add (for
	// traces).
	applied func(blk *block.Block, took time.Duration)
}

func (a chainAdapter) Tip() block.Tip          { return a.db.Tip() }
func (a chainAdapter) ImmutableTip() block.Tip { return a.db.ImmutableTip() }
func (a chainAdapter) FindIntersect(points []block.Point) (block.Point, bool) {
	return a.db.FindIntersect(points)
}
func (a chainAdapter) NewFollower(from block.Point) (chainsync.Follower, error) {
	return a.db.NewFollower(from)
}
func (a chainAdapter) Blocks(from, to block.Point) (iter.Seq2[*block.Block, error], error) {
	return a.db.Blocks(from, to)
}
func (a chainAdapter) BlockByNumber(n uint64) (*block.Block, error) { return a.db.BlockByNumber(n) }
func (a chainAdapter) AddBlock(blk *block.Block) error {
	if blk.Body.Certificate != nil {
		// Its parent came before it: stored, or ours. Without it AddBlock
		// says why.
		if parent, err := a.db.Block(blk.Header.Prev()); err == nil {
			a.leios.FetchAhead(blk, parent.Header)
		}
	}
	if a.applied == nil {
		_, err := a.add(blk)
		return err
	}
	start := time.Now()
	_, err := a.add(blk)
	if err == nil {
		a.applied(blk, time.Since(start))
	}
	return err
}

// forgeMempool presents the mempool as forge.Mempool: one snapshot's txs,
// and the tip they were validated against.
type forgeMempool struct{ pool *mempool.Mempool }

// ForgeMempool presents pool to the forge as a node does: the benchmarks
// forge from it.
func ForgeMempool(pool *mempool.Mempool) forge.Mempool { return forgeMempool{pool} }

func (m forgeMempool) Txs() (iter.Seq[*ledger.Tx], block.Tip) {
	s := m.pool.Snapshot()
	return func(yield func(*ledger.Tx) bool) {
		for e := range s.All() {
			if !yield(e.Tx) {
				return
			}
		}
	}, s.Tip()
}

func (m forgeMempool) RemoveTxs(ctx context.Context, txHashes []block.Hash) ([]block.Hash, error) {
	return m.pool.RemoveTxs(ctx, txHashes)
}

// forgeChain presents the chain database as forge.Chain.
type forgeChain struct{ countingChain }

func (c forgeChain) AddBlock(blk *block.Block) (bool, error) {
	res, err := c.add(blk)
	return res.Adopted, err
}

// isInvalidBlock tells a peer's fault (a block that fails validation, or
// does not link to its chain) from anything else. A fork deeper than k is
// not counted: an honest peer that was partitioned for a while serves one,
// and chain sync tells it apart (Options.IsForkTooDeep).
func isInvalidBlock(err error) bool {
	for _, sentinel := range []error{
		chaindb.ErrInvalidBlock, chaindb.ErrUnknownPredecessor,
		consensus.ErrUnknownIssuer, consensus.ErrWrongVRFKey, consensus.ErrBadVRFProof,
		consensus.ErrNotLeader, consensus.ErrFutureSlot, consensus.ErrBodyTooLarge,
		block.ErrBadSignature, block.ErrBodyMismatch,
	} {
		if errors.Is(err, sentinel) {
			return true
		}
	}
	return false
}

// txSubmissionMempool presents the mempool to the tx-submission protocol:
// snapshot walks by ticket, and adds that decode the peer's bytes first.
type txSubmissionMempool struct{ pool *mempool.Mempool }

// TxSubmissionMempool presents pool to tx submission as a node does: the
// benchmarks serve txs through it.
func TxSubmissionMempool(pool *mempool.Mempool) txsubmission.Mempool {
	return txSubmissionMempool{pool}
}

// TxsAfter grows dst once, to its final size: a walk runs every few
// hundred ms for every peer, and answers grown by appending (or allocated
// afresh each walk) paced the garbage collections whose pauses stalled the
// walks.
func (m txSubmissionMempool) TxsAfter(dst []txsubmission.MempoolTx, after uint64, max int) []txsubmission.MempoolTx {
	s := m.pool.Snapshot()
	n := min(max, s.LenAfter(after))
	if n <= 0 {
		return dst
	}
	dst = slices.Grow(dst, n)
	for entry := range s.After(after) {
		if n == 0 {
			break
		}
		dst = append(dst, txsubmission.MempoolTx{
			Ticket: entry.Ticket, Hash: entry.Tx.Hash(), Bytes: entry.Tx.Bytes(), Size: entry.Tx.Size(),
		})
		n--
	}
	return dst
}

func (m txSubmissionMempool) Lookup(hash block.Hash) ([]byte, bool) {
	entry, ok := m.pool.Snapshot().Lookup(hash)
	if !ok {
		return nil, false
	}
	return entry.Tx.Bytes(), true
}

func (m txSubmissionMempool) Has(hash block.Hash) bool { return m.pool.Snapshot().Has(hash) }
func (m txSubmissionMempool) RecentlyRejected(hash block.Hash) bool {
	return m.pool.RecentlyRejected(hash)
}
func (m txSubmissionMempool) Changed() <-chan struct{} { return m.pool.Changed() }

// Add decodes and admits one peer's tx, labelled as the intake it is: the
// one-by-one add whose outcomes AddTxs gives each tx of a reply.
func (m txSubmissionMempool) Add(ctx context.Context, raw []byte) error {
	var err error
	cpuwork.Do(ctx, cpuwork.Intake, func(ctx context.Context) {
		var tx *ledger.Tx
		if tx, err = ledger.DecodeTx(raw); err == nil {
			err = m.pool.AddRelayed(ctx, []*ledger.Tx{tx})[0]
		}
	})
	return err
}

// AddTxs decodes and admits the txs of one tx-submission reply together
// (mempool.AddRelayed: their signatures verified at once, off the add
// lock; a tx that came before its parent awaits it), labelled as intake.
// Each tx's error is the one Add gives it; a tx that does not decode is
// refused alone.
func (m txSubmissionMempool) AddTxs(ctx context.Context, raws [][]byte) []error {
	errs := make([]error, len(raws))
	cpuwork.Do(ctx, cpuwork.Intake, func(ctx context.Context) {
		txs := make([]*ledger.Tx, 0, len(raws))
		at := make([]int, 0, len(raws))
		for i, raw := range raws {
			tx, err := ledger.DecodeTx(raw)
			if err != nil {
				errs[i] = err
				continue
			}
			txs, at = append(txs, tx), append(at, i)
		}
		for j, err := range m.pool.AddRelayed(ctx, txs) {
			errs[at[j]] = err
		}
	})
	return errs
}
