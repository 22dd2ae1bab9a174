package leios

import (
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/txcache"
)

// Closure returns the closure of the EB at pt, in EB order, if all of it
// is held here: the bytes, as a peer is served them.
func (p *Pipeline) Closure(pt block.Point) ([][]byte, bool, error) {
	info, known, err := p.db.PointInfo(pt)
	if err != nil || !known || !info.Complete() {
		return nil, false, err
	}
	txs, err := p.db.Closure(pt.Hash)
	return txs, err == nil, err
}

// Body returns the EB body of ebHash, decoded, if it is held.
func (p *Pipeline) Body(ebHash block.Hash) (*block.EBBody, bool, error) {
	raw, held, err := p.db.Body(ebHash)
	if err != nil || !held {
		return nil, false, err
	}
	eb, err := block.DecodeEBBody(raw, p.opts.Limits)
	return eb, err == nil, err
}

// ClosureTxs returns the closure of the EB at pt, in EB order, decoded and
// ready to apply, if all of it is held here: its body in the LeiosDB, and
// each tx in the LeiosDB or the mempool. Each tx's witnesses are verified
// once per node, whatever path it took: a tx the mempool holds comes from
// it — admitted, so verified, and decoded already: no LeiosDB read, no
// decode; any other is read from the LeiosDB and decoded, and is Verified
// if the tx cache marks it validated (MarkVerified).
//
// The txs the mempool holds count as held before they are stored: the
// body's arrival stores them at once (insertBody), but a closure of
// thousands takes a while to store, and a vote need not wait for it.
func (p *Pipeline) ClosureTxs(pt block.Point) ([]ledger.BatchTx, bool, error) {
	return p.closureTxs(pt, false)
}

// storedClosureTxs is ClosureTxs once the whole closure is in the LeiosDB:
// what the chain applies must be there for a replay after a restart.
func (p *Pipeline) storedClosureTxs(pt block.Point) ([]ledger.BatchTx, bool, error) {
	return p.closureTxs(pt, true)
}

func (p *Pipeline) closureTxs(pt block.Point, stored bool) ([]ledger.BatchTx, bool, error) {
	info, known, err := p.db.PointInfo(pt)
	if err != nil || !known || !info.HasBody || stored && !info.Complete() {
		return nil, false, err
	}
	eb, held, err := p.Body(pt.Hash)
	if err != nil || !held {
		return nil, false, err
	}
	txs := make([]ledger.BatchTx, len(eb.Txs))
	var toRead []int // offsets to read from the LeiosDB
	for i, e := range eb.Txs {
		if p.mempool != nil {
			if tx, ok := p.mempool.Tx(e.TxHash); ok {
				txs[i] = ledger.BatchTx{Tx: tx, Verified: true}
				continue
			}
		}
		toRead = append(toRead, i)
	}
	if len(toRead) == 0 {
		return txs, true, nil
	}
	raws, err := p.db.TxsByOffsets(pt.Hash, toRead)
	if errors.Is(err, leiosdb.ErrTxMissing) {
		return nil, false, nil // not all here yet
	}
	if err != nil {
		return nil, false, err
	}
	for j, i := range toRead {
		// The LeiosDB holds each tx under the hash it was checked against
		// when it came in, the one the body names: no need to hash it again.
		tx, err := ledger.DecodeHashedTx(raws[j], eb.Txs[i].TxHash)
		if err != nil {
			return nil, false, fmt.Errorf("leios: closure of %s: tx %d: %w", pt, i, err)
		}
		state, _ := p.cache.LookupTx(eb.Txs[i].TxHash)
		txs[i] = ledger.BatchTx{Tx: tx, Verified: state == txcache.TxValidated}
	}
	return txs, true, nil
}

// MarkVerified records that the witnesses of these closure txs verified
// (a closure check applied them in full), so that applying the CertRB
// that certifies their EB does not verify them again. Marks go to the tx
// cache, which vouches only for txs of the EBs it holds: a tx it has
// forgotten is verified again, never the other way round.
func (p *Pipeline) MarkVerified(txHashes []block.Hash) {
	if len(txHashes) == 0 {
		return
	}
	p.ingestMu.Lock()
	defer p.ingestMu.Unlock()
	p.cache.MarkValidated(txHashes)
}
