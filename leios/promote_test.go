package leios

import (
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

// A syncing node's parked CertRB, once its closure arrives, is adopted with
// the blocks after it in one reselection, which takes the immutable tip
// past the CertRB at once. Its certified EB is still kept for good, so the
// node can serve the closure to the next syncing node.
func TestCertifiedEBKeptWhenImmutableTipJumpsPastItsCertRB(t *testing.T) {
	const k = 10
	net := newTestNet(t)
	p, chain, eb, txs, announcing := announcedOnChain(t, net, newFunds(t), k)
	slot := 1 + uint64(net.validator.Leios().MinCertGap)
	certRB := net.rb(announcing.Header, slot, nil, nil, net.certify(t, announcing))
	if _, err := chain.AddBlock(certRB); err != nil {
		t.Fatal(err)
	}
	// Blocks after the parked CertRB wait with it.
	prev := certRB.Header
	for range k + 3 {
		slot++
		blk := net.rb(prev, slot, nil, nil, nil)
		if _, err := chain.AddBlock(blk); err != nil {
			t.Fatal(err)
		}
		prev = blk.Header
	}
	if chain.Tip().Point != announcing.Point() {
		t.Fatal("blocks after a parked CertRB were selected")
	}
	deliverClosure(t, p, eb, txs)
	// The reselection adopts all of them: the immutable tip jumps past
	// the CertRB, and the pipeline prunes below it.
	waittest.Until(t, "the blocks after the CertRB adopted and the pipeline pruned below the immutable tip", func() bool {
		return chain.Tip().Point == prev.Point() && p.fetcher.Floor() >= chain.ImmutableTip().Point.Slot
	})
	if chain.ImmutableTip().BlockNumber <= certRB.Header.BlockNumber {
		t.Fatalf("immutable tip %v: not past the CertRB", chain.ImmutableTip())
	}
	pt := block.Point{Slot: 1, Hash: eb.Hash()}
	info, known, err := p.DB().PointInfo(pt)
	if err != nil || !known || !info.Promoted {
		t.Fatalf("the certified EB: known %v, %+v, %v; want it kept for good", known, info, err)
	}
	if _, held, err := p.Closure(pt); err != nil || !held {
		t.Fatalf("the certified closure is gone (%v)", err)
	}
}
