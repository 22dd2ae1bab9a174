package leios

import (
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

// CertRBs that chain sync brings ahead of the chain have their closures
// fetched two at a time, in the order they came: the third EB is not even
// recorded until one of the first two closures is complete. The same
// CertRB from three peers is queued once; one whose certificate does not
// verify is not queued at all.
func TestFetchAheadTwoAtATime(t *testing.T) {
	net := newTestNet(t)
	f := newFunds(t)
	opts := testOptions(t)
	opts.Validator = net.validator
	p := openPipeline(t, opts)
	runPipeline(t, p)

	// rbs[i] announces ebs[i] and certifies ebs[i-1].
	gap := uint64(net.validator.Leios().MinCertGap)
	var rbs []*block.Block
	var ebs []*block.EBBody
	var closures [][][]byte
	var points []block.Point
	for i := range 4 {
		txs := f.payments(t, 3, uint64(1_000_000+i))
		eb := blocktest.EBOf(t, txs).Body
		ann := eb.Announcement()
		var prev *block.Header
		var cert *block.Certificate
		if i > 0 {
			prev, cert = rbs[i-1].Header, net.certify(t, rbs[i-1])
		}
		rb := net.rb(prev, 1+uint64(i)*gap, nil, &ann, cert)
		rbs, ebs, closures = append(rbs, rb), append(ebs, eb), append(closures, txs)
		points = append(points, block.Point{Slot: rb.Header.Slot, Hash: eb.Hash()})
	}
	known := func(pt block.Point) bool {
		t.Helper()
		_, ok, err := p.db.PointInfo(pt)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	bogus := net.rb(rbs[0].Header, rbs[1].Header.Slot, nil, nil, net.certify(t, rbs[2]))
	p.FetchAhead(bogus, rbs[0].Header)
	if p.ahead.has(points[0]) || known(points[0]) {
		t.Fatal("a CertRB whose certificate does not verify had its closure fetched")
	}
	for range 3 { // three peers bring the same blocks
		for i := 1; i < len(rbs); i++ {
			p.FetchAhead(rbs[i], rbs[i-1].Header)
		}
	}
	if !known(points[0]) || !known(points[1]) || known(points[2]) {
		t.Fatalf("EBs recorded for fetching: %v %v %v, want the first two", known(points[0]), known(points[1]), known(points[2]))
	}
	p.ahead.mu.Lock()
	live, waiting := len(p.ahead.live), len(p.ahead.waiting)
	p.ahead.mu.Unlock()
	if live != 2 || waiting != 1 {
		t.Fatalf("%d closures fetched ahead and %d waiting, want 2 and 1", live, waiting)
	}

	// The first closure arrives (as the fetch logic would store it): the
	// third takes its place.
	if err := p.insertBody(points[0], ebs[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := p.insertTxs(points[0], block.HashTxs(closures[0]), false); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "a complete closure lets the next one be fetched", func() bool { return known(points[2]) })
	if p.ahead.has(points[0]) {
		t.Fatal("a complete closure still holds its place")
	}
}
