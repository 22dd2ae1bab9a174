package forge

import (
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// ebFixture is a fixture whose pool (the whole committee) forged, at slot
// 1, an RB announcing an EB of the txs past the RB's.
type ebFixture struct {
	*fixture
	rb  *block.Block
	eb  block.Point
	txs []*ledger.Tx
}

func newEBFixture(t *testing.T) *ebFixture {
	t.Helper()
	f := newFixture(t, false, 1000, func(o *Options) {
		o.EBLimits = block.EBLimits{MaxBodyBytes: 10_000, MaxClosureBytes: 100_000, MaxTxs: 100}
	})
	txs := f.chainOfTxs(t, 12)
	f.admit(t, txs...)
	rb, err := f.forger.ForgeSlot(1)
	if err != nil || rb == nil || rb.Header.Announcement == nil {
		t.Fatalf("forging the announcing RB: %v %v", rb, err)
	}
	return &ebFixture{fixture: f, rb: rb, eb: block.Point{Slot: 1, Hash: rb.Header.Announcement.EbHash}, txs: txs}
}

func (f *ebFixture) minCertSlot() uint64 {
	return f.rb.Header.Slot + uint64(f.genesis.Leios.MinCertGap)
}

// The pool votes on its tip's EB inside the window once the closure is
// held and applies; the next leader at least MinCertGap slots later builds
// a CertRB: the certificate, no txs, and the closure on the ledger.
func TestVoteThenCertRB(t *testing.T) {
	f := newEBFixture(t)
	lp := f.genesis.Leios
	f.forger.VoteSlot(1) // the RB's own slot: before LHdr
	if got := f.leios.votes[f.rb.Hash()]; len(got) != 0 {
		t.Fatalf("voted before the window: %v", got)
	}
	f.forger.VoteSlot(1 + uint64(lp.LHdr))
	votes := f.leios.votes[f.rb.Hash()]
	if len(votes) != 1 || f.leios.outcomes[f.eb] != VoteCast {
		t.Fatalf("votes %v, outcome %q", votes, f.leios.outcomes[f.eb])
	}
	s, _ := block.SubjectOf(f.rb.Header)
	if err := f.validator.Committee().VerifyVote(&votes[0], s); err != nil {
		t.Fatalf("the vote does not verify: %v", err)
	}
	if !f.leios.validated[f.eb] {
		t.Fatal("the closure check before the vote was not recorded")
	}
	// The closure's witnesses were verified by the check: applying it again
	// (the CertRB) need not verify them.
	for _, tx := range f.leios.closures[f.eb] {
		if !f.leios.verified[tx.Hash] {
			t.Fatalf("closure tx %s verified but not recorded so", tx.Hash.Short())
		}
	}
	f.forger.VoteSlot(2 + uint64(lp.LHdr))
	if len(f.leios.votes[f.rb.Hash()]) != 1 {
		t.Fatal("voted twice")
	}

	if blk, err := f.forger.ForgeSlot(f.minCertSlot() - 1); err != nil || blk == nil || blk.Body.Certificate != nil {
		t.Fatalf("a block before the certification gap: %v %v", blk, err)
	}
	// That RB took the tip; go back to a chain ending in the announcing RB.
	f2 := newEBFixture(t)
	f2.forger.VoteSlot(1 + uint64(lp.LHdr))
	cert, err := f2.forger.ForgeSlot(f2.minCertSlot())
	if err != nil || cert == nil {
		t.Fatalf("forging the CertRB: %v %v", cert, err)
	}
	if cert.Body.Certificate == nil || !cert.Header.LeiosCertified || len(cert.Body.Txs) != 0 {
		t.Fatalf("not a CertRB: cert %v, flag %v, %d txs", cert.Body.Certificate, cert.Header.LeiosCertified, len(cert.Body.Txs))
	}
	if err := f2.validator.ValidateCertification(cert, f2.rb.Header); err != nil {
		t.Fatalf("the certificate does not verify: %v", err)
	}
	if f2.chain.Tip().Point != cert.Point() || f2.forger.Certificates() != 1 {
		t.Fatal("the CertRB was not adopted")
	}
	// Each leader's look at the votes is recorded: too early, then
	// certified with the one vote.
	if a := f.leios.attempts[f.eb]; len(a) != 1 || a[0].Outcome != CertifyTooEarly || a[0].Votes != 1 {
		t.Fatalf("the early leader's attempt: %+v", a)
	}
	if a := f2.leios.attempts[f2.eb]; len(a) != 1 || a[0].Outcome != CertifyCertified || a[0].Votes != 1 || a[0].Slot != f2.minCertSlot() {
		t.Fatalf("the certifying leader's attempt: %+v", a)
	}
	// The closure is on the ledger: the last EB tx's output is unspent.
	closure := f2.leios.closures[f2.eb]
	last, err := ledger.DecodeTx(closure[len(closure)-1].Bytes)
	if err != nil {
		t.Fatal(err)
	}
	view, _, release, err := f2.chain.TipUTxO()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, ok, err := view.Lookup(ledger.TxIn{TxID: last.ID(), Index: 0}); err != nil || !ok {
		t.Fatalf("the certified closure is not on the ledger: %v", err)
	}
}

// No vote for an EB whose closure is not held in the window, whose closure
// does not apply, whose announcement equivocates, whose RB stops being
// the tip, or whose RB became the tip after the window; each is recorded.
func TestNoVote(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setUp func(*ebFixture)
		want  string
	}{
		{"closure incomplete", func(f *ebFixture) { delete(f.leios.closures, f.eb) }, VoteClosureIncomplete},
		{"invalid closure", func(f *ebFixture) {
			// The RB's own first tx again: its input is spent on the ledger after the RB.
			f.leios.closures[f.eb] = []block.HashedTx{{Hash: f.txs[0].Hash(), Bytes: f.txs[0].Bytes()}}
		}, VoteInvalidClosure},
		{"equivocation", func(f *ebFixture) { f.leios.equivocated[1] = true }, VoteEquivocation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEBFixture(t)
			tc.setUp(f)
			lp := f.genesis.Leios
			for slot := uint64(1); slot <= 2+uint64(lp.LHdr+lp.LVote); slot++ {
				f.forger.VoteSlot(slot)
			}
			if got := f.leios.votes[f.rb.Hash()]; len(got) != 0 {
				t.Fatalf("voted: %v", got)
			}
			if got := f.leios.outcomes[f.eb]; got != tc.want {
				t.Fatalf("outcome %q, want %q", got, tc.want)
			}
			if blk, err := f.forger.ForgeSlot(f.minCertSlot()); err != nil || blk == nil || blk.Body.Certificate != nil {
				t.Fatalf("a certificate without a vote: %v %v", blk, err)
			}
		})
	}
	// The RB became the tip only after its window (a slot battle resolved
	// late): its closure is held, yet the ballot opens too late to vote,
	// and says so rather than blaming the closure.
	t.Run("tip after the window", func(t *testing.T) {
		f := newEBFixture(t)
		lp := f.genesis.Leios
		f.forger.VoteSlot(2 + uint64(lp.LHdr+lp.LVote))
		if got := f.leios.votes[f.rb.Hash()]; len(got) != 0 {
			t.Fatalf("voted: %v", got)
		}
		if got := f.leios.outcomes[f.eb]; got != VoteTipAfterWindow {
			t.Fatalf("outcome %q, want %q", got, VoteTipAfterWindow)
		}
	})
	t.Run("tip replaced", func(t *testing.T) {
		f := newEBFixture(t)
		f.forger.VoteSlot(1)
		if blk, err := f.forger.ForgeSlot(2); err != nil || blk == nil {
			t.Fatalf("forging the next RB: %v %v", blk, err)
		}
		f.forger.VoteSlot(2)
		if got := f.leios.outcomes[f.eb]; got != VoteTipReplaced {
			t.Fatalf("outcome %q", got)
		}
	})
}

// A second header seen after the RB became the tip, but before the vote
// (the header diffusion period, LHdr), still stops the vote; one seen
// after the votes stops the leader's certificate.
func TestLateEquivocation(t *testing.T) {
	f := newEBFixture(t)
	lp := f.genesis.Leios
	f.forger.VoteSlot(1) // the ballot opens on the RB, no twin seen yet
	f.leios.equivocated[1] = true
	f.forger.VoteSlot(1 + uint64(lp.LHdr))
	if got := f.leios.votes[f.rb.Hash()]; len(got) != 0 || f.leios.outcomes[f.eb] != VoteEquivocation {
		t.Fatalf("votes %v, outcome %q: want none, and the equivocation recorded", got, f.leios.outcomes[f.eb])
	}

	f2 := newEBFixture(t)
	f2.forger.VoteSlot(1 + uint64(lp.LHdr)) // voted: no twin yet
	f2.leios.equivocated[1] = true
	blk, err := f2.forger.ForgeSlot(f2.minCertSlot())
	if err != nil || blk == nil || blk.Body.Certificate != nil {
		t.Fatalf("a certificate for an equivocated EB: %v %v", blk, err)
	}
	if a := f2.leios.attempts[f2.eb]; len(a) != 1 || a[0].Outcome != CertifyEquivocation || a[0].Votes != 1 {
		t.Fatalf("the leader's attempt: %+v", a)
	}
}

// At origin there is nothing to vote on, and nothing is recorded.
func TestNoBallotAtOrigin(t *testing.T) {
	f := newFixture(t, false, 1000)
	for slot := range uint64(20) {
		f.forger.VoteSlot(slot)
	}
	if len(f.leios.outcomes) != 0 {
		t.Fatalf("outcomes recorded at origin: %v", f.leios.outcomes)
	}
}
