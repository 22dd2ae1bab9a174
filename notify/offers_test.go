package notify_test

import (
	"os"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/notify"
)

// store inserts e at p into db as a node would after the announcement:
// point, body, closure.
func store(t testingT, db *leiosdb.DB, p block.Point, e eb, txs bool) {
	t.Helper()
	if err := db.InsertPoint(p, e.body.Size()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.InsertBody(p, e.body.Bytes()); err != nil {
		t.Fatal(err)
	}
	if txs {
		if _, err := db.InsertTxs(block.HashTxs(e.txs)); err != nil {
			t.Fatal(err)
		}
	}
}

func openTestDB(t testingT, opts ...func(*leiosdb.Options)) *leiosdb.DB {
	t.Helper()
	o := leiosdb.Options{Logger: quietLogger(), CacheBytes: 1 << 20, MemTableBytes: 1 << 20}
	for _, f := range opts {
		f(&o)
	}
	dir, err := os.MkdirTemp("", "notify-leiosdb-")
	if err != nil {
		t.Fatal(err)
	}
	db, err := leiosdb.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
		_ = os.RemoveAll(dir)
	})
	return db
}

// wantLabels checks the stream against the expected labels exactly.
func wantLabels(t *testing.T, tp *tap, want ...string) {
	t.Helper()
	tp.waitFor(t, len(want))
	got := tp.quiet(t, len(want))
	for i := range want {
		if label(got[i]) != want[i] {
			t.Fatalf("stream%s\nwant %v", describe(got), want)
		}
	}
}

// TestOfferWaitsForAnnouncement: when the LeiosDB holds a point before the
// relay accepted its announcement, the offers wait and follow it.
func TestOfferWaitsForAnnouncement(t *testing.T) {
	n := newTestNet(t, 1)
	db := openTestDB(t)
	r := n.relay(t)
	runRelay(t, r, db)
	tp := newTap(t, r)
	e := newEB(t, 1, 2, 3)
	h := n.header(40, 0, e.announcement(), 0)
	p := block.Point{Slot: 40, Hash: e.body.Hash()}
	store(t, db, p, e, true)
	tp.quiet(t, 0)
	if err := r.Announce(h); err != nil {
		t.Fatal(err)
	}
	wantLabels(t, tp, "ann("+h.Point().String()+")", "offer("+p.String()+")", "txs("+p.String()+")")
	m := tp.messages()[1].(*notify.MsgBlockOffer)
	if uint64(m.EbSize) != e.body.Size() {
		t.Fatalf("offered size %d, body is %d bytes", m.EbSize, e.body.Size())
	}
}

// TestCatchUp: a newly served peer gets the volatile state in slot order —
// each announcement followed by the offers of its point, once — then the
// votes; nothing pruned.
func TestCatchUp(t *testing.T) {
	n := newTestNet(t, 2)
	db := openTestDB(t)
	r := n.relay(t)
	ebs := []eb{newEB(t, 1), newEB(t, 2, 3), newEB(t, 4), newEB(t, 5)}
	h5 := n.header(5, 0, ebs[0].announcement(), 0)
	h10 := n.header(10, 0, ebs[1].announcement(), 0)
	h10b := n.header(10, 0, ebs[1].announcement(), 1) // equivocation naming the same EB
	h20 := n.header(20, 1, ebs[2].announcement(), 0)
	h25 := n.header(25, 1, ebs[3].announcement(), 0) // its EB never arrives
	h30 := n.header(30, 0, nil, 0)
	for _, h := range []*block.Header{h30, h20, h10, h5, h25, h10b} {
		if err := r.Announce(h); err != nil {
			t.Fatal(err)
		}
	}
	p := func(h *block.Header) block.Point { return block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash} }
	store(t, db, p(h5), ebs[0], true)
	store(t, db, p(h10), ebs[1], true)
	store(t, db, p(h20), ebs[2], false)
	if _, err := r.Votes([]block.Vote{{RbHash: h20.Hash(), VoterSeat: 1}, {RbHash: h5.Hash(), VoterSeat: 1}}); err != nil {
		t.Fatal(err)
	}
	r.Prune(8)
	// The follower catches up with the LeiosDB; an earlier peer sees it as live
	// offers: 5 announcements, 1 vote batch, then 3 offers.
	early := newTap(t, r)
	runRelay(t, r, db)
	early.waitFor(t, 9)

	tp := newTap(t, r)
	wantLabels(t, tp,
		"ann("+h10.Point().String()+")", "offer("+p(h10).String()+")", "txs("+p(h10).String()+")",
		"ann("+h10b.Point().String()+")",
		"ann("+h20.Point().String()+")", "offer("+p(h20).String()+")",
		"ann("+h25.Point().String()+")",
		"ann("+h30.Point().String()+")",
		"votes(1)",
	)
}

// TestLaggingSubscription: a relay whose LeiosDB follower is cut off (its
// buffer filled) catches up from Points and loses no offer. With a
// buffer of one event, announcing a held EB at a second slot — two events in
// one commit — always cuts the subscription off.
func TestLaggingSubscription(t *testing.T) {
	n := newTestNet(t, 1)
	db := openTestDB(t, func(o *leiosdb.Options) { o.EventBuffer = 1 })
	r := n.relay(t)
	tp := newTap(t, r)
	runRelay(t, r, db)
	const count = 6
	var points []block.Point
	for i := range uint64(count) {
		e := newEB(t, 100+i)
		p, again := block.Point{Slot: 10 + i, Hash: e.body.Hash()}, block.Point{Slot: 50 + i, Hash: e.body.Hash()}
		for _, h := range []*block.Header{n.header(p.Slot, 0, e.announcement(), 0), n.header(again.Slot, 0, e.announcement(), 0)} {
			if err := r.Announce(h); err != nil {
				t.Fatal(err)
			}
		}
		store(t, db, p, e, true)
		if err := db.InsertPoint(again, e.body.Size()); err != nil {
			t.Fatal(err)
		}
		points = append(points, p, again)
	}
	msgs := tp.waitFor(t, 3*len(points))
	msgs = tp.quiet(t, 3*len(points))
	seen := map[string]int{}
	for _, m := range msgs {
		seen[label(m)]++
	}
	for _, p := range points {
		if seen["offer("+p.String()+")"] != 1 || seen["txs("+p.String()+")"] != 1 {
			t.Fatalf("offers of %s: %v", p, seen)
		}
	}
}
