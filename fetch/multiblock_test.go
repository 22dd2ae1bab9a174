package fetch

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
)

// Certified points whose bodies are wanted go whole, in multi-block
// requests of up to MaxBlocksPerRequest EBs, MaxWholeInFlight in flight per
// peer that speaks /leios/fetch/2, and none point by point meanwhile; without such a
// peer they go point by point to the others.
func TestPlanMultiBlock(t *testing.T) {
	d := newDecisions(Options{Syncing: func() bool { return true }})
	cip, cip2, proto := peerID("cip"), peerID("cip2"), peerID("proto")
	d.peerUp(cip, true)
	d.peerUp(cip2, true)
	d.peerUp(proto, false)
	var points []block.Point
	for i := range 2*MaxBlocksPerRequest + 3 {
		p := block.Point{Slot: uint64(100 + i), Hash: fill(byte(i + 1))}
		d.announce(p, 1000)
		d.certify(p)
		points = append(points, p)
	}
	reqs, _ := d.plan(time.Unix(0, 0))
	var whole, bodies int
	asked := make(map[block.Hash]int)
	for _, r := range reqs {
		switch r.Kind {
		case RequestBlocks:
			whole++
			if r.Peer == proto || len(r.Blocks) > MaxBlocksPerRequest {
				t.Fatalf("multi-block request %v", r)
			}
			for _, b := range r.Blocks {
				asked[b.Point.Hash]++
			}
		case RequestBody:
			bodies++
			asked[r.Point.Hash]++
		}
	}
	if whole != 2 {
		t.Fatalf("%d multi-block requests, want one per /leios/fetch/2 peer", whole)
	}
	for _, p := range points[:2*MaxBlocksPerRequest] {
		if asked[p.Hash] != 1 {
			t.Fatalf("%v asked %d times", p, asked[p.Hash])
		}
	}
	if bodies != 0 {
		t.Fatalf("%d certified bodies asked for point by point while peers speak /leios/fetch/2", bodies)
	}
	if err := d.check(); err != nil {
		t.Fatal(err)
	}
	// A peer takes a second request while its first is in flight, and no
	// third: the rest go to the other.
	more, _ := d.plan(time.Unix(10, 0))
	if len(more) != 1 || more[0].Kind != RequestBlocks || len(more[0].Blocks) != 3 {
		t.Fatalf("the three left: %v, want one multi-block request", more)
	}
	busy := more[0].Peer
	for i := range MaxBlocksPerRequest {
		p := block.Point{Slot: uint64(200 + i), Hash: fill(byte(100 + i))}
		d.announce(p, 1000)
		d.certify(p)
	}
	third, _ := d.plan(time.Unix(20, 0))
	if len(third) != 1 || third[0].Kind != RequestBlocks || third[0].Peer == busy {
		t.Fatalf("with %s at %d requests in flight: %v, want one to the other peer", busy, MaxWholeInFlight, third)
	}
	more = append(more, third...)
	for _, r := range append(reqs, more...) {
		d.complete(r.ID, true)
	}
	if err := d.check(); err != nil {
		t.Fatal(err)
	}
	d.peerDown(cip)
	d.peerDown(cip2)
	if fallback, _ := d.plan(time.Unix(20, 0)); len(fallback) == 0 || fallback[0].Kind != RequestBody || fallback[0].Peer != proto {
		t.Fatalf("with /leios/fetch/1 peers only: %v, want body requests", fallback)
	}
}

// A late point — announced after its voting window, to a node catching up
// — is not fetched on its offers; once certified it is, whole from a peer
// that speaks /leios/fetch/2, else point by point.
func TestLatePointWaitsForItsCertificate(t *testing.T) {
	for _, multiBlock := range []bool{true, false} {
		d := newDecisions(Options{Syncing: func() bool { return true }})
		src := peerID("source")
		d.peerUp(src, multiBlock)
		p := block.Point{Slot: 100, Hash: fill(1)}
		d.announce(p, 1000)
		d.markLate(p)
		d.offer(src, p, 1000, false)
		d.offer(src, p, 0, true)
		if reqs, _ := d.plan(time.Unix(0, 0)); len(reqs) != 0 {
			t.Fatalf("multi-block %v: a late, uncertified point fetched: %v", multiBlock, reqs)
		}
		d.certify(p)
		reqs, _ := d.plan(time.Unix(1, 0))
		want := RequestBody
		if multiBlock {
			want = RequestBlocks
		}
		if len(reqs) != 1 || reqs[0].Kind != want {
			t.Fatalf("multi-block %v: once certified %v, want one %v", multiBlock, reqs, want)
		}
		if err := d.check(); err != nil {
			t.Fatal(err)
		}
	}
}
