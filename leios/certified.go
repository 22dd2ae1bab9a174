package leios

import (
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// ErrClosureIncomplete: the certified EB's closure is not all here yet.
var ErrClosureIncomplete = errors.New("leios: certified closure incomplete")

// ApplyBlock is the chain's Options.ApplyBlock: a block's txs on the
// ledger before it. A CertRB is first checked against its parent
// (consensus.Validator.ValidateCertification); then the certified closure
// is applied in EB order, then the block's own txs (a CertRB has none). A
// CertRB whose closure is not complete here is not ready: the chain parks
// it (chaindb.ErrNotReady), the fetch logic fetches that closure first,
// from any peer, and the chain reselects once it is complete.
func (p *Pipeline) ApplyBlock(utxo ledger.UTxO, blk *block.Block, parent *block.Header, reapply bool) (*ledger.Diff, error) {
	certified := blk.Body.Certificate != nil
	if err := p.opts.Validator.ValidateCertification(blk, parent); err != nil {
		return nil, err
	}
	if certified && !reapply {
		p.certsVerified.Add(1)
	}
	closure, err := p.certifiedTxs(blk, parent)
	if err != nil {
		return nil, err
	}
	if reapply {
		for i := range closure {
			closure[i].Verified = true
		}
	}
	d, err := ledger.ApplyBatch(p.opts.Ledger, utxo, blk.Header.Slot, closure)
	if err != nil {
		return nil, fmt.Errorf("certified closure: %w", err)
	}
	// A tx the mempool admitted had its witnesses checked then: a block
	// applying it again costs no signature check.
	verified := func(tx *ledger.Tx) bool {
		return reapply || p.mempool != nil && p.mempool.Has(block.Hash(tx.Hash()))
	}
	raw := make([][]byte, len(blk.Body.Txs))
	for i, tx := range blk.Body.Txs {
		raw[i] = tx
	}
	own, err := ledger.ApplyTxsVerified(p.opts.Ledger, ledger.Overlay{Base: utxo, Diffs: []*ledger.Diff{d}}, blk.Header.Slot, raw, verified)
	if err != nil {
		return nil, err
	}
	d.Append(own)
	if certified && !reapply {
		p.certsApplied.Add(1)
	}
	return d, nil
}

// certifiedTxs are the txs of the closure blk certifies, if it is a CertRB
// (ClosureTxs), ready to apply before the block's own txs. An incomplete
// closure is an error wrapping chaindb.ErrNotReady and
// ErrClosureIncomplete.
func (p *Pipeline) certifiedTxs(blk *block.Block, parent *block.Header) ([]ledger.BatchTx, error) {
	pt, ok := consensus.CertifiedPoint(blk, parent)
	if !ok {
		return nil, nil
	}
	return p.certifiedClosure(pt, parent)
}

// certifiedClosure returns the closure of the certified EB at pt, announced
// by parent, or an error wrapping chaindb.ErrNotReady and
// ErrClosureIncomplete, having made sure the pipeline knows the point and
// fetches it first.
func (p *Pipeline) certifiedClosure(pt block.Point, parent *block.Header) ([]ledger.BatchTx, error) {
	closure, held, err := p.storedClosureTxs(pt)
	if err != nil || held {
		return closure, err
	}
	if err := p.fetchCertified(pt, parent); err != nil {
		return nil, err
	}
	p.parkedMu.Lock()
	p.parked[pt] = struct{}{}
	p.parkedMu.Unlock()
	// The closure may have completed since it was read (FetchAhead fetches
	// closures early), and its completion found nothing parked: read it
	// again, or the chain would wait for a reselection that never comes.
	if closure, held, err := p.storedClosureTxs(pt); err != nil || held {
		return closure, err
	}
	return nil, fmt.Errorf("%w: %w: %s", chaindb.ErrNotReady, ErrClosureIncomplete, pt)
}

// fetchCertified has the fetch logic fetch the closure of the certified
// EB at pt, announced by parent, before any other.
func (p *Pipeline) fetchCertified(pt block.Point, parent *block.Header) error {
	if _, known, err := p.db.PointInfo(pt); err != nil {
		return err
	} else if !known {
		// A node taking up a chain may meet the CertRB before any
		// announcement of its EB reached the pipeline.
		p.ingestAnnouncement(parent)
	}
	p.fetcher.Certified(pt)
	return nil
}

// closureCompleted has the chain reselect if a CertRB waited for the
// closure of pt. It runs on the LeiosDB follower, never under a lock the
// chain's AddBlock takes.
func (p *Pipeline) closureCompleted(pt block.Point) {
	p.ahead.done(pt)
	p.releaseAhead()
	p.refill.completed()
	p.parkedMu.Lock()
	_, waited := p.parked[pt]
	delete(p.parked, pt)
	p.parkedMu.Unlock()
	if !waited || p.chain == nil {
		return
	}
	if res, err := p.chain.Reselect(); err != nil {
		p.log.Warn("reselecting after a certified closure completed", "point", pt, "err", err)
	} else if res.Adopted {
		p.log.Info("parked CertRB adopted: its certified closure is complete", "point", pt, "tip", res.Tip)
	}
}

// promoteCertified keeps for good the EBs that the selected chain
// certifies from block from (the immutable tip when it last ran) to the
// tip, before GC may drop them (their announcing RB may already be
// immutable): a syncing node fetches certified closures from its peers.
// Starting at the last run's immutable tip, not the current one, covers a
// CertRB that went from volatile to immutable in one jump — a reselection
// adopting many blocks at once, as when a syncing node's parked CertRB
// gets its closure. A CertRB that is later rolled back leaves its EB
// promoted; that costs one closure's space.
func (p *Pipeline) promoteCertified(from uint64) error {
	tip := p.chain.Tip().BlockNumber
	var parent *block.Header
	if from > 1 {
		blk, err := p.chain.BlockByNumber(from - 1)
		if err != nil {
			return nil // the selection moved; the next prune goes on
		}
		parent = blk.Header
	}
	for n := max(from, 1); n <= tip; n++ {
		blk, err := p.chain.BlockByNumber(n)
		if err != nil {
			return nil // the selection moved; the next prune goes on
		}
		if parent != nil && blk.Header.Prev() != parent.Hash() {
			return nil // the selection moved; the next prune goes on
		}
		if pt, ok := consensus.CertifiedPoint(blk, parent); ok {
			if err := p.db.Promote(pt); err != nil {
				return fmt.Errorf("leios: promoting the EB certified at %s: %w", pt, err)
			}
		}
		parent = blk.Header
	}
	return nil
}
