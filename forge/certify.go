package forge

import (
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// certify builds, for a block forged at slot on tip, the certificate of the
// EB the tip announced, with the diff of its closure on view (the ledger
// after the tip) — or nil when the tip announced none, the EB is younger
// than MinCertGap, its closure is not all here, the votes relayed do not
// reach the quorum, or the closure does not apply at slot. Then the block
// is an ordinary RB.
func (f *Forger) certify(view ledger.UTxO, tip block.Tip, slot uint64) (*block.Certificate, *ledger.Diff) {
	if f.opts.Leios == nil || tip.Point.IsOrigin() {
		return nil, nil
	}
	parent, err := f.opts.Ledger.Block(tip.Point.Hash)
	if err != nil {
		f.opts.Logger.Warn("forge: reading the tip", "tip", tip, "err", err)
		return nil, nil
	}
	h := parent.Header
	if h.Announcement == nil || slot < h.Slot+uint64(f.opts.Validator.Leios().MinCertGap) {
		return nil, nil
	}
	p := block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash}
	closure, held, err := f.opts.Leios.Closure(p)
	if err != nil || !held {
		f.opts.Logger.Info("forge: no certificate: closure not held", "eb", p, "err", err)
		return nil, nil
	}
	votes := f.opts.Leios.Votes(h.Hash())
	cert, err := f.opts.Validator.Committee().Certify(h.Hash(), votes)
	if err != nil {
		level := f.opts.Logger.Warn
		if errors.Is(err, consensus.ErrNoQuorum) {
			level = f.opts.Logger.Info
		}
		level("forge: no certificate", "eb", p, "votes", len(votes), "err", err)
		return nil, nil
	}
	diff, err := f.applyClosure(view, slot, closure)
	if err != nil {
		f.opts.Logger.Warn("forge: no certificate: the certified closure does not apply", "eb", p, "slot", slot, "err", err)
		return nil, nil
	}
	return cert, diff
}

// applyClosure applies closure in order on view at slot and returns its
// diff. A tx the mempool holds was validated with its signatures on
// admission: it is reapplied, decoded already; any other is decoded and
// applied in full.
func (f *Forger) applyClosure(view ledger.UTxO, slot uint64, closure [][]byte) (*ledger.Diff, error) {
	acc := ledger.NewDiff()
	utxo := ledger.Overlay{Base: view, Diffs: []*ledger.Diff{acc}}
	for i, raw := range closure {
		hash := block.HashBytes(raw)
		apply := ledger.Reapply
		tx, admitted := (*ledger.Tx)(nil), false
		if f.opts.Mempool != nil {
			tx, admitted = f.opts.Mempool.Tx(hash)
		}
		if !admitted {
			var err error
			if tx, err = ledger.DecodeTx(raw); err != nil {
				return nil, fmt.Errorf("tx %d: %w", i, err)
			}
			apply = ledger.Apply
		}
		d, err := apply(*f.opts.Params, utxo, slot, tx)
		if err != nil {
			return nil, fmt.Errorf("tx %d (%s): %w", i, block.Hash(tx.ID()), err)
		}
		acc.Append(d)
	}
	return acc, nil
}
