package consensus

import (
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// CertRB rejection reasons. A CertRB is an RB whose body carries a
// certificate for the EB its parent announced, and no txs of its own.
var (
	ErrCertRBTxs = errors.New("consensus: a CertRB carries txs of its own")
	// ErrNothingToCertify: the parent announced no EB.
	ErrNothingToCertify = errors.New("consensus: the parent announced no EB to certify")
	// ErrCertTooEarly: the CertRB comes less than MinCertGap slots after
	// the RB that announced the EB.
	ErrCertTooEarly = errors.New("consensus: certificate before the minimum certification gap")
)

// ValidateCertification checks the certificate of b against its parent,
// the RB whose announced EB it certifies: the parent announced an EB, b's
// slot is at least MinCertGap after the parent's, and the certificate
// verifies for the parent's announcement (Committee.VerifyCertificate). A
// block without a certificate passes. ValidateBlock has checked the rest.
func (v *Validator) ValidateCertification(b *block.Block, parent *block.Header) error {
	cert := b.Body.Certificate
	if cert == nil {
		return nil
	}
	if parent == nil || parent.Announcement == nil {
		return fmt.Errorf("%w: block %d", ErrNothingToCertify, b.Header.BlockNumber)
	}
	s, _ := block.SubjectOf(parent)
	if gap := b.Header.Slot - parent.Slot; gap < uint64(v.leios.MinCertGap) {
		return fmt.Errorf("%w: %d slots after the announcement, need %d", ErrCertTooEarly, gap, v.leios.MinCertGap)
	}
	return v.committee.VerifyCertificate(s, cert)
}

// CertifiedByHeader is CertifiedPoint from headers alone: a CertRB's header
// says it carries a certificate (LeiosCertified), for walks of a chain that
// read no bodies.
func CertifiedByHeader(h, parent *block.Header) (block.Point, bool) {
	if !h.LeiosCertified || parent == nil || parent.Announcement == nil {
		return block.Point{}, false
	}
	return block.Point{Slot: parent.Slot, Hash: parent.Announcement.EbHash}, true
}

// CertifiedPoint is the EB point a CertRB's parent announced: what the
// CertRB certifies. ok is false for an RB that certifies nothing.
func CertifiedPoint(b *block.Block, parent *block.Header) (block.Point, bool) {
	if b.Body.Certificate == nil || parent == nil || parent.Announcement == nil {
		return block.Point{}, false
	}
	return block.Point{Slot: parent.Slot, Hash: parent.Announcement.EbHash}, true
}
