package leios

import (
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
)

// CertifiedPoint is a closure the selected chain applied: the EB at Point,
// certified by block CertifiedBy.
type CertifiedPoint struct {
	Point       block.Point
	CertifiedBy block.Tip
}

// missingCertified walks the selected chain's headers and returns the
// closures it certifies that the LeiosDB does not hold whole, with each
// CertRB and its parent: the LeiosDB deleted, or its newest WAL lost (it is
// written without fsync), while the chain kept them. Only CertRBs, whose
// bodies hold a certificate and no txs, are read whole.
func (p *Pipeline) missingCertified() ([]missingClosure, error) {
	tip := p.chain.Tip().BlockNumber
	var missing []missingClosure
	var parent *block.Header
	for n := uint64(1); n <= tip; n++ {
		h, err := p.chain.HeaderByNumber(n)
		if err != nil {
			return nil, fmt.Errorf("leios: reading header %d of the chain: %w", n, err)
		}
		if pt, ok := consensus.CertifiedByHeader(h, parent); ok {
			info, known, err := p.db.PointInfo(pt)
			if err != nil {
				return nil, err
			}
			if !known || !info.Complete() {
				certRB, err := p.chain.BlockByNumber(n)
				if err != nil {
					return nil, fmt.Errorf("leios: reading block %d of the chain: %w", n, err)
				}
				missing = append(missing, missingClosure{pt, certRB, parent})
			}
		}
		parent = h
	}
	return missing, nil
}

// missingClosure is a certified closure the LeiosDB lacks.
type missingClosure struct {
	point  block.Point
	certRB *block.Block
	parent *block.Header // the announcing RB's header
}

// MissingCertified lists the closures the selected chain certifies that
// the LeiosDB does not hold whole (for `db check`, on a stopped node).
func (p *Pipeline) MissingCertified() ([]CertifiedPoint, error) {
	missing, err := p.missingCertified()
	if err != nil {
		return nil, err
	}
	out := make([]CertifiedPoint, len(missing))
	for i, m := range missing {
		out[i] = CertifiedPoint{Point: m.point, CertifiedBy: block.Tip{Point: m.certRB.Point(), BlockNumber: m.certRB.Header.BlockNumber}}
	}
	return out, nil
}
