package leios

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/forge"
)

// header is a signed header of number n at slot, after prev, announcing
// ann, with the certified flag cert.
func header(t *testing.T, prev *block.Header, slot uint64, ann *block.Announcement, cert bool) *block.Header {
	t.Helper()
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	hb := block.HeaderBody{BlockNumber: 1, Slot: slot, Announcement: ann, LeiosCertified: cert}
	if prev != nil {
		ph := prev.Hash()
		hb.BlockNumber, hb.PrevHash = prev.BlockNumber+1, &ph
	}
	return block.NewHeader(hb, key)
}

// TestFateAfter: an EB's fate once the next block follows its RB, one row
// per reason: from this node's own view of the EB, and from what it found
// when it forged the next block itself.
func TestFateAfter(t *testing.T) {
	const gap = 14
	eb := block.Announcement{EbHash: block.Hash{0xeb}, EbSize: 100}
	rb := header(t, nil, 10, &eb, false)
	next := header(t, rb, 10+gap, nil, false)
	held := time.Now()
	led := func(outcome string) *apitypes.CertifyAttempt {
		return &apitypes.CertifyAttempt{Slot: next.Slot, Outcome: outcome}
	}
	for _, tc := range []struct {
		name     string
		next     *block.Header
		vote     string
		complete bool
		certify  *apitypes.CertifyAttempt
		want     apitypes.EBFate
	}{
		{"certified", header(t, rb, 10+gap, nil, true), forge.VoteCast, true, nil, apitypes.EBFate{Fate: apitypes.FateCertified}},
		{"equivocation", next, forge.VoteEquivocation, true, nil, apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonEquivocation}},
		{"too early", header(t, rb, 10+gap-1, nil, false), forge.VoteCast, true, nil, apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonTooEarly}},
		{"invalid closure", next, forge.VoteInvalidClosure, true, nil, apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonInvalid}},
		{"closure incomplete", next, "", false, nil, apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonIncomplete}},
		{"RB adopted after the window", next, forge.VoteTipAfterWindow, true, nil, apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonLateTip}},
		{"no quorum", next, forge.VoteCast, true, nil, apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonNoQuorum}},
		// This node forged next: what it found then is the reason.
		{"led: no quorum", next, "", false, led(forge.CertifyNoQuorum), apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonNoQuorum}},
		{"led: votes do not certify", next, forge.VoteCast, true, led(forge.CertifyNotCertifying), apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonNoQuorum}},
		{"led: closure not held", next, forge.VoteCast, true, led(forge.CertifyNoClosure), apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonIncomplete}},
		{"led: closure does not apply", next, forge.VoteCast, true, led(forge.CertifyInvalid), apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonInvalid}},
		{"led: equivocation", next, forge.VoteCast, true, led(forge.CertifyEquivocation), apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonEquivocation}},
		{"led: too early", next, forge.VoteCast, true, led(forge.CertifyTooEarly), apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonTooEarly}},
		// It certified in a block of the same slot that lost, or led
		// another slot: its own view of the EB tells.
		{"led: a block that lost", next, "", false, led(forge.CertifyCertified), apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonIncomplete}},
		{"led another slot", next, forge.VoteCast, true, &apitypes.CertifyAttempt{Slot: next.Slot + 1, Outcome: forge.CertifyNoClosure}, apitypes.EBFate{Fate: apitypes.FateNotCertified, Reason: apitypes.ReasonNoQuorum}},
	} {
		e := &apitypes.EBTimes{Slot: rb.Slot, EbHash: eb.EbHash.String(), Vote: tc.vote, Certify: tc.certify}
		if tc.complete {
			e.Closure = &held
		}
		got := fateAfter(e, rb, tc.next, gap)
		if got.Fate != tc.want.Fate || got.Reason != tc.want.Reason {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if (got.Fate == apitypes.FateCertified) != (got.CertifiedBy != nil && got.CertifiedBy.Hash == tc.next.Hash().String()) {
			t.Errorf("%s: certified by %+v", tc.name, got.CertifiedBy)
		}
	}
}

// headerChain is a selected chain of headers, as the pipeline reads it;
// the header of number gone, if set, is rolled back as it is read.
type headerChain struct {
	headers []*block.Header
	gone    uint64
}

func (c *headerChain) Tip() block.Tip {
	h := c.headers[len(c.headers)-1]
	return block.Tip{Point: h.Point(), BlockNumber: h.BlockNumber}
}
func (c *headerChain) ImmutableTip() block.Tip     { return block.Tip{Point: block.Origin} }
func (c *headerChain) TipChanged() <-chan struct{} { return nil }
func (c *headerChain) BlockByNumber(uint64) (*block.Block, error) {
	return nil, errors.New("headers only")
}
func (c *headerChain) Reselect() (chaindb.AddResult, error) { return chaindb.AddResult{}, nil }
func (c *headerChain) HeaderByNumber(n uint64) (*block.Header, error) {
	if n < 1 || n > uint64(len(c.headers)) || n == c.gone {
		return nil, errors.New("no such block")
	}
	return c.headers[n-1], nil
}

// TestFatesFollowTheChain: an EB is pending while its RB is the tip,
// certified once a CertRB follows, and not certified — its RB off the
// chain — after a rollback to a fork without it; an EB of a newer slot
// than the tip is pending, and so is one whose RB a rollback hid while the
// chain was read.
func TestFatesFollowTheChain(t *testing.T) {
	opts := testOptions(t)
	p := openPipeline(t, opts)
	gap := uint64(opts.Validator.Leios().MinCertGap)
	eb := block.Announcement{EbHash: block.Hash{0xeb}, EbSize: 100}
	genesis := header(t, nil, 1, nil, false)
	rb := header(t, genesis, 5, &eb, false)
	pt := block.Point{Slot: rb.Slot, Hash: eb.EbHash}
	p.ebs.recordAnnounced(pt, rb.Hash(), time.Now())
	later := block.Point{Slot: 900, Hash: block.Hash{0xee}}
	p.ebs.recordAnnounced(later, block.Hash{0x99}, time.Now())

	chain := &headerChain{headers: []*block.Header{genesis, rb}}
	if err := p.Attach(chain, nil); err != nil {
		t.Fatal(err)
	}
	if f := fateOf(t, p, pt); f.Fate != apitypes.FatePending {
		t.Errorf("RB at the tip: %+v", f)
	}
	certRB := header(t, rb, rb.Slot+gap, nil, true)
	chain.headers = append(chain.headers, certRB)
	if f := fateOf(t, p, pt); f.Fate != apitypes.FateCertified || f.CertifiedBy == nil || f.CertifiedBy.Number != certRB.BlockNumber {
		t.Errorf("after the CertRB: %+v", f)
	}
	// A rollback to a longer fork off the genesis block.
	fork := []*block.Header{genesis}
	for slot := uint64(6); slot < 9; slot++ {
		fork = append(fork, header(t, fork[len(fork)-1], slot, nil, false))
	}
	chain.headers = fork
	if f := fateOf(t, p, pt); f.Fate != apitypes.FateNotCertified || f.Reason != apitypes.ReasonOffChain {
		t.Errorf("after the rollback: %+v", f)
	}
	if f := fateOf(t, p, later); f.Fate != apitypes.FatePending {
		t.Errorf("an EB newer than the tip: %+v", f)
	}
	// A rollback while the chain is read: what was not met says pending.
	chain.headers, chain.gone = []*block.Header{genesis, rb, certRB}, certRB.BlockNumber
	if f := fateOf(t, p, pt); f.Fate != apitypes.FatePending {
		t.Errorf("a rollback while read: %+v", f)
	}
}

// TestFateOfAnEBTwoLeadersAnnounced: two leaders of one slot holding the
// same txs announce the same EB. This node met the RB that lost the slot
// first and named the EB by it; the EB is certified all the same once a
// CertRB follows the RB that won.
func TestFateOfAnEBTwoLeadersAnnounced(t *testing.T) {
	opts := testOptions(t)
	p := openPipeline(t, opts)
	gap := uint64(opts.Validator.Leios().MinCertGap)
	eb := block.Announcement{EbHash: block.Hash{0xeb}, EbSize: 100}
	genesis := header(t, nil, 1, nil, false)
	won := header(t, genesis, 5, &eb, false)
	ph := genesis.Hash()
	lost := block.NewHeader(block.HeaderBody{BlockNumber: won.BlockNumber, Slot: won.Slot, PrevHash: &ph, Announcement: &eb},
		ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize)))
	if lost.Hash() == won.Hash() {
		t.Fatal("the two leaders' RBs are one")
	}
	pt := block.Point{Slot: won.Slot, Hash: eb.EbHash}
	p.ebs.recordAnnounced(pt, lost.Hash(), time.Now())
	chain := &headerChain{headers: []*block.Header{genesis, won}}
	if err := p.Attach(chain, nil); err != nil {
		t.Fatal(err)
	}
	certRB := header(t, won, won.Slot+gap, nil, true)
	chain.headers = append(chain.headers, certRB)
	if f := fateOf(t, p, pt); f.Fate != apitypes.FateCertified || f.CertifiedBy == nil || f.CertifiedBy.Number != certRB.BlockNumber {
		t.Errorf("fate %+v, want certified by block %d", f, certRB.BlockNumber)
	}
}

// fateOf is the fate p lists for the EB at pt.
func fateOf(t *testing.T, p *Pipeline, pt block.Point) apitypes.EBFate {
	t.Helper()
	for _, e := range p.EBTimes() {
		if e.Slot == pt.Slot && e.EbHash == pt.Hash.String() {
			return *e.Fate
		}
	}
	t.Fatalf("EB %s not listed", pt)
	return apitypes.EBFate{}
}
