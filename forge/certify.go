package forge

import (
	"errors"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// What a leader found when it looked at the tip's EB (CertifyAttempt):
// the API's words (package apitypes), which the node's clients read.
const (
	CertifyCertified     = apitypes.CertifyCertified
	CertifyTooEarly      = apitypes.CertifyTooEarly
	CertifyNoClosure     = apitypes.CertifyNoClosure
	CertifyNoQuorum      = apitypes.CertifyNoQuorum
	CertifyInvalid       = apitypes.CertifyInvalid
	CertifyNotCertifying = apitypes.CertifyNotCertifying
	CertifyEquivocation  = apitypes.CertifyEquivocation
)

// CertifyAttempt is what a leader saw of the tip's EB when it forged on
// it (Leios.RecordCertify): the votes it held and whether it certified.
type CertifyAttempt struct {
	Slot    uint64 // of the block forged
	At      time.Time
	Votes   int
	Outcome string // one of the Certify* outcomes
}

// certify builds, for a block forged at slot on tip, the certificate of the
// EB the tip announced, with the diff of its closure on view (the ledger
// after the tip) — or nil when the tip announced none, the EB is younger
// than MinCertGap, its closure is not all here, the votes relayed do not
// reach the quorum, or the closure does not apply at slot. Then the block
// is an ordinary RB. What it found is recorded (Leios.RecordCertify).
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
	if h.Announcement == nil {
		return nil, nil
	}
	s, _ := block.SubjectOf(h)
	p := block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash}
	votes := f.opts.Leios.Votes(h.Hash())
	attempt := CertifyAttempt{Slot: slot, At: f.opts.Now(), Votes: len(votes)}
	defer func() { f.opts.Leios.RecordCertify(p, attempt) }()
	if slot < h.Slot+uint64(f.opts.Validator.Leios().MinCertGap) {
		attempt.Outcome = CertifyTooEarly
		return nil, nil
	}
	if f.opts.Leios.Equivocated(h.Slot, h.IssuerVKey) {
		// Votes cast before the second header was seen do not make it one
		// EB: certify neither.
		attempt.Outcome = CertifyEquivocation
		return nil, nil
	}
	closure, held, err := f.opts.Leios.ClosureTxs(p)
	if err != nil || !held {
		attempt.Outcome = CertifyNoClosure
		f.opts.Logger.Info("forge: no certificate: closure not held", "eb", p, "err", err)
		return nil, nil
	}
	cert, err := f.opts.Validator.Committee().Certify(s, votes)
	if err != nil {
		attempt.Outcome = CertifyNotCertifying
		level := f.opts.Logger.Warn
		if errors.Is(err, consensus.ErrNoQuorum) {
			attempt.Outcome = CertifyNoQuorum
			level = f.opts.Logger.Info
		}
		level("forge: no certificate", "eb", p, "votes", len(votes), "err", err)
		return nil, nil
	}
	diff, err := f.applyClosure(view, slot, closure)
	if err != nil {
		attempt.Outcome = CertifyInvalid
		f.opts.Logger.Warn("forge: no certificate: the certified closure does not apply", "eb", p, "slot", slot, "err", err)
		return nil, nil
	}
	attempt.Outcome = CertifyCertified
	return cert, diff
}

// applyClosure applies closure in order on view at slot and returns its
// diff. Witnesses this node verified before (a tx its mempool admitted) are
// not verified again; those it verifies here are recorded, so the CertRB
// that applies the closure later does not verify them again either.
func (f *Forger) applyClosure(view ledger.UTxO, slot uint64, closure []ledger.BatchTx) (*ledger.Diff, error) {
	d, err := ledger.ApplyBatch(*f.opts.Params, view, slot, closure)
	if err != nil {
		return nil, err
	}
	var verified []block.Hash
	for _, tx := range closure {
		if !tx.Verified {
			verified = append(verified, tx.Tx.Hash())
		}
	}
	f.opts.Leios.MarkVerified(verified)
	return d, nil
}
