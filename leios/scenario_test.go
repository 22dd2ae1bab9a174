package leios

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/txcache"
)

var peerA, peerB, peerC = peerID("a"), peerID("b"), peerID("c")

// The life of one EB: announced, body offered and fetched, closure offered
// and fetched in packed requests naming its point, nothing fetched twice.
func TestScriptOneEB(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Fetch.MaxRequestBytes = 10_000 })
	h.peerUp(peerA)
	eb := blocktest.NewEB(t, 1000, blocktest.Seeds(0, 100)...)
	p := h.announce(10, eb)
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("planned %v before any offer", reqs)
	}
	h.offerBody(peerA, p)
	reqs := h.plan()
	if len(reqs) != 1 || reqs[0].Kind != fetch.RequestBody || reqs[0].Point != p || reqs[0].Peer != peerA || reqs[0].EbSize != eb.Body.Size() {
		t.Fatalf("want one body request for %s to a, got %v", p, reqs)
	}
	if again := h.plan(); len(again) != 0 {
		t.Fatalf("body requested twice: %v", again)
	}
	h.reply(reqs[0])
	if got := h.f.Missing(p); len(got) != 100 {
		t.Fatalf("missing %d txs after the body, want 100", len(got))
	}
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("txs requested from a peer that offered only the body: %v", reqs)
	}
	h.offerClosure(peerA, p)
	reqs = h.plan()
	bodies, txs := kinds(reqs)
	if len(bodies) != 0 || len(txs) != 10 {
		t.Fatalf("want 10 txs requests of 10 txs (10 kB each), got %v", reqs)
	}
	for _, r := range txs {
		if r.Point != p || r.Peer != peerA || r.Bytes > 10_000 || len(r.Offsets) != 10 {
			t.Fatalf("bad request %v", r)
		}
	}
	if got := offsetsOf(txs); !slices.Equal(got, seedsInt(0, 100)) {
		t.Fatalf("requested offsets %v", got)
	}
	h.replyAll(reqs)
	if !h.complete(p) {
		t.Fatal("closure not complete")
	}
	if reqs := h.drain(); len(reqs) != 0 {
		t.Fatalf("requests after completion: %v", reqs)
	}
	if s := h.f.Stats(); s.Incomplete != 0 || s.BodiesWanted != 0 || s.Requests != 0 || s.FetchedBytes != eb.Body.Size()+eb.Body.ClosureSize() {
		t.Fatalf("stats %+v", s)
	}
}

func seedsInt(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// A tx shared by two EBs is requested once and its arrival discharges both.
func TestScriptSharedTxFetchedOnce(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA, peerB)
	eb1 := blocktest.NewEB(t, 500, 1, 2, 3, 4)
	eb2 := blocktest.NewEB(t, 500, 3, 4, 5)
	p1, p2 := h.announce(10, eb1), h.announce(11, eb2)
	for _, p := range []block.Point{p1, p2} {
		h.offerClosure(peerA, p)
		h.offerClosure(peerB, p)
	}
	all := h.drain()
	bodies, txs := kinds(all)
	if len(bodies) != 2 {
		t.Fatalf("want 2 body requests, got %v", bodies)
	}
	for tx, n := range txRequests(txs) {
		if n != 1 {
			t.Fatalf("tx %s requested %d times", tx.Short(), n)
		}
	}
	if len(txRequests(txs)) != 5 {
		t.Fatalf("want 5 distinct txs requested, got %d", len(txRequests(txs)))
	}
	if !h.complete(p1) || !h.complete(p2) {
		t.Fatal("closures not complete")
	}
}

// A shared tx that arrives for one EB is discharged from the other, even
// while that other EB's request for it is still being planned.
func TestScriptArrivalDischargesEveryEB(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	eb1 := blocktest.NewEB(t, 500, 1, 2)
	eb2 := blocktest.NewEB(t, 500, 2, 3)
	p1, p2 := h.announce(10, eb1), h.announce(20, eb2)
	h.must(h.p.insertBody(p1, eb1.Body, nil))
	h.must(h.p.insertBody(p2, eb2.Body, nil))
	h.offerClosure(peerA, p2) // freshest first: tx 2 is asked for under p2
	reqs := h.plan()
	if len(reqs) != 1 || reqs[0].Point != p2 || len(reqs[0].Offsets) != 2 {
		t.Fatalf("want one request for both txs of %s, got %v", p2, reqs)
	}
	h.reply(reqs[0])
	if got := h.f.Missing(p1); !slices.Equal(got, []int{0}) {
		t.Fatalf("%s still misses %v, want only tx 1 (offset 0)", p1, got)
	}
}

// The same EB hash announced at two slots: two points, one body fetched
// once, and each point's txs requests name a real point of that body.
func TestScriptSameEBAtTwoSlots(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA, peerB)
	eb := blocktest.NewEB(t, 300, 7, 8, 9)
	p1, p2 := h.announce(10, eb), h.announce(12, eb)
	h.offerBody(peerA, p1)
	h.offerBody(peerB, p2)
	reqs := h.plan()
	if bodies, _ := kinds(reqs); len(bodies) != 1 {
		t.Fatalf("want the body requested once, got %v", reqs)
	}
	h.replyAll(reqs)
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("a held body requested again: %v", reqs)
	}
	h.offerClosure(peerB, p1)
	all := h.drain()
	for _, r := range all {
		if r.Point != p1 || r.Peer != peerB {
			t.Fatalf("request %v: only b offered a closure, for %s", r, p1)
		}
	}
	if !h.complete(p1) || !h.complete(p2) {
		t.Fatal("both points must be complete")
	}
	// A third announcement of the held hash acquires it at once.
	p3 := h.announce(15, eb)
	h.offerBody(peerA, p3)
	if reqs := h.plan(); len(reqs) != 0 || !h.complete(p3) {
		t.Fatalf("third point: requests %v, complete %v", reqs, h.complete(p3))
	}
}

// Forging after an offer: a peer offered the EB the forge is inserting;
// once the forge's body and validated txs are in, nothing is fetched.
func TestScriptForgeAfterOffer(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	eb := blocktest.NewEB(t, 400, blocktest.Seeds(100, 110)...)
	p := h.announce(30, eb)
	h.offerBody(peerA, p)
	h.offerClosure(peerA, p)
	h.must(h.p.insertBody(p, eb.Body, nil))
	h.must(h.p.insertTxs(p, block.HashTxs(eb.Txs), true))
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("fetched the forge's own EB: %v", reqs)
	}
	if !h.complete(p) {
		t.Fatal("the forged closure is not complete")
	}
	if st, _ := h.p.cache.LookupTx(block.HashBytes(eb.Txs[0])); st != txcache.TxValidated {
		t.Fatalf("forged tx is %s in the cache, want validated", st)
	}
}

// A forged EB whose txs another EB still misses discharges them there.
func TestScriptForgedTxsDischargeOtherEB(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	other := blocktest.NewEB(t, 400, 1, 2, 3, 4)
	p := h.announce(10, other)
	h.offerBody(peerA, p)
	h.replyAll(h.plan())
	forged := blocktest.NewEB(t, 400, 2, 3, 5)
	h.forge(11, forged)
	if got := h.f.Missing(p); !slices.Equal(got, []int{0, 3}) {
		t.Fatalf("%s misses %v, want offsets 0 and 3", p, got)
	}
	h.offerClosure(peerA, p)
	all := h.drain()
	if got := len(txRequests(all)); got != 2 {
		t.Fatalf("want only the two txs the forge did not have fetched, got %d", got)
	}
	if !h.complete(p) {
		t.Fatal("closure not complete")
	}
}

// A concurrent offer and body arrival never leave a held body listed: the
// body comes from the forge or another peer while a peer offers it.
func TestConcurrentOfferAndBodyArrival(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	for i := range uint64(40) {
		eb := blocktest.NewEB(t, 200, 1000+i, 2000+i)
		p := h.announce(100+i, eb)
		var wg sync.WaitGroup
		wg.Go(func() { h.f.BlockOffer(peerA, p, eb.Body.Size()) })
		wg.Go(func() {
			if err := h.p.insertBody(p, eb.Body, nil); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		h.check()
		for _, r := range h.plan() {
			if r.Kind == fetch.RequestBody {
				t.Fatalf("held body requested: %v", r)
			}
		}
	}
}

// A body request in flight when the body arrives from elsewhere ends
// harmlessly, and the body is not requested again.
func TestScriptBodyArrivesWhileRequested(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	eb := blocktest.NewEB(t, 200, 1, 2)
	p := h.announce(5, eb)
	h.offerBody(peerA, p)
	reqs := h.plan()
	h.must(h.p.insertBody(p, eb.Body, nil)) // e.g. the forge, or a hedge
	h.reply(reqs[0])
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("requests after the body arrived twice: %v", reqs)
	}
}

// Freshest first when caught up, oldest first while syncing.
func TestScriptPriority(t *testing.T) {
	for _, syncing := range []bool{false, true} {
		h := newHarness(t, func(o *Options) {
			o.Fetch.MaxRequestsPerPeer = 1
			o.Fetch.Syncing = func() bool { return syncing }
		})
		h.peerUp(peerA)
		old, fresh := blocktest.NewEB(t, 100, 1), blocktest.NewEB(t, 100, 2)
		pOld, pFresh := h.announce(10, old), h.announce(20, fresh)
		h.offerBody(peerA, pOld)
		h.offerBody(peerA, pFresh)
		reqs := h.plan()
		want := pFresh
		if syncing {
			want = pOld
		}
		if len(reqs) != 1 || reqs[0].Point != want {
			t.Fatalf("syncing %v: want %s first, got %v", syncing, want, reqs)
		}
	}
}

// Budgets: per request, per peer, in total; the rest waits for replies.
func TestScriptBudgets(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Fetch.MaxRequestBytes = 5_000
		o.Fetch.MaxPeerInFlightBytes = 20_000
		o.Fetch.MaxInFlightBytes = 30_000
	})
	h.peerUp(peerA, peerB)
	eb := blocktest.NewEB(t, 1000, blocktest.Seeds(0, 100)...)
	p := h.announce(10, eb)
	h.must(h.p.insertBody(p, eb.Body, nil))
	h.offerClosure(peerA, p)
	h.offerClosure(peerB, p)
	reqs := h.plan()
	var perPeer = map[string]uint64{}
	var total uint64
	for _, r := range reqs {
		if r.Bytes > 5_000 {
			t.Fatalf("request of %d bytes", r.Bytes)
		}
		perPeer[string(r.Peer)] += r.Bytes
		total += r.Bytes
	}
	if total != 30_000 || perPeer[string(peerA)] != 20_000 || perPeer[string(peerB)] != 10_000 {
		t.Fatalf("in flight: total %d, per peer %v", total, perPeer)
	}
	h.replyAll(reqs)
	h.drain()
	if !h.complete(p) {
		t.Fatal("closure not complete")
	}
}

// A peer that goes away releases its budget; its requests go elsewhere.
// A failed request withdraws the peer's offer for that point.
func TestScriptPeerDownReplans(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA, peerB)
	eb := blocktest.NewEB(t, 500, blocktest.Seeds(0, 20)...)
	p := h.announce(10, eb)
	h.must(h.p.insertBody(p, eb.Body, nil))
	h.offerClosure(peerA, p)
	first := h.plan()
	if len(first) != 1 || first[0].Peer != peerA {
		t.Fatalf("want one request to a, got %v", first)
	}
	h.offerClosure(peerB, p)
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("txs in flight to a requested from b too, without a hedge: %v", reqs)
	}
	h.peerDown(peerA)
	if s := h.f.Stats(); s.Requests != 0 || s.InFlightBytes != 0 {
		t.Fatalf("a's budget not released: %+v", s)
	}
	second := h.plan()
	if len(second) != 1 || second[0].Peer != peerB || !slices.Equal(second[0].Offsets, first[0].Offsets) {
		t.Fatalf("want a's request re-planned to b, got %v", second)
	}
	h.fail(second[0])
	h.peerUp(peerA)
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("both failed, so both offers are withdrawn; yet planned %v", reqs)
	}
	h.offerClosure(peerA, p)
	if reqs := h.plan(); len(reqs) != 1 || reqs[0].Peer != peerA {
		t.Fatalf("after a offered again, want a request to a, got %v", reqs)
	}
}

// Hedging: an item outstanding for HedgeAfter goes to a second peer, never
// a third.
func TestScriptHedge(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Fetch.HedgeAfter = time.Second })
	h.peerUp(peerA, peerB, peerC)
	eb := blocktest.NewEB(t, 500, 1, 2, 3)
	p := h.announce(10, eb)
	h.must(h.p.insertBody(p, eb.Body, nil))
	for _, id := range []string{"a", "b", "c"} {
		h.offerClosure(peerID(id), p)
	}
	first := h.plan()
	if len(first) != 1 {
		t.Fatalf("want one request, got %v", first)
	}
	_, next := h.f.Plan()
	if want := h.now.Add(time.Second); !next.Equal(want) {
		t.Fatalf("next hedge at %v, want %v", next, want)
	}
	h.now = h.now.Add(time.Second)
	second := h.plan()
	if len(second) != 1 || second[0].Peer == first[0].Peer || !slices.Equal(second[0].Offsets, first[0].Offsets) {
		t.Fatalf("want the same txs hedged to another peer, got %v after %v", second, first)
	}
	h.now = h.now.Add(time.Hour)
	if third := h.plan(); len(third) != 0 {
		t.Fatalf("a third peer asked: %v", third)
	}
	h.reply(second[0])
	h.reply(first[0]) // the late duplicate is harmless
	if !h.complete(p) {
		t.Fatal("closure not complete")
	}
}

// Prune: points below the immutable slot are forgotten (cache first, then
// LeiosDB, then the logic); late replies for them are harmless; later
// announcements below are ignored; a tx only a pruned EB held is fetched
// again for a new EB (no stale cache hit).
func TestScriptPrune(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	old := blocktest.NewEB(t, 300, 1, 2)
	pOld := h.forge(5, old)
	pending := blocktest.NewEB(t, 300, 3)
	pPending := h.announce(6, pending)
	h.offerBody(peerA, pPending)
	late := h.plan()
	h.must(h.p.Prune(10))
	if st, _ := h.p.cache.LookupTx(block.HashBytes(old.Txs[0])); st.Held() {
		t.Fatal("the cache vouches for a tx the LeiosDB collected")
	}
	if _, ok, _ := h.p.db.PointInfo(pOld); ok {
		t.Fatal("the pruned point is still in the LeiosDB")
	}
	h.replyAll(late)
	h.must(h.p.insertAnnouncement(7, rbHash(7, pending), pending.Announcement()))
	if s := h.f.Stats(); s.Points != 0 {
		t.Fatalf("points below the prune floor: %+v", s)
	}
	again := blocktest.NewEB(t, 300, 1, 9)
	p := h.announce(20, again)
	h.must(h.p.insertBody(p, again.Body, nil))
	if got := h.f.Missing(p); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("new EB misses %v, want both txs", got)
	}
}

// An EB body that declares a wrong size for a tx already held is invalid:
// its point is rejected and the body never requested again.
func TestScriptInvalidBodyRejected(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	good := blocktest.NewEB(t, 300, 1)
	h.forge(5, good)
	tx := good.Txs[0]
	liar, err := block.NewEBBody([]block.EBTx{{TxHash: block.HashBytes(tx), Size: uint32(len(tx) + 1)}}, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	bad := &blocktest.EB{Body: liar, Txs: [][]byte{tx}}
	p := h.announce(6, bad)
	h.offerBody(peerA, p)
	h.replyAll(h.plan())
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("an invalid body requested again: %v", reqs)
	}
}

// A restarted pipeline takes up what its LeiosDB holds.
func TestRestore(t *testing.T) {
	opts := testOptions(t)
	db, err := leiosdb.Open(opts.Dir, leiosdb.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	eb := blocktest.NewEB(t, 300, 1, 2, 3)
	p := eb.Point(10)
	if err := db.InsertPoint(p, eb.Body.Size()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.InsertBody(p, eb.Body.Bytes()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.InsertTxs(block.HashTxs(eb.Txs[1:2])); err != nil {
		t.Fatal(err)
	}
	wanted := blocktest.NewEB(t, 300, 4)
	if err := db.InsertPoint(wanted.Point(11), wanted.Body.Size()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	pl := openPipeline(t, opts)
	if err := pl.CheckConsistency(); err != nil {
		t.Fatal(err)
	}
	if got := pl.fetcher.Missing(p); !slices.Equal(got, []int{0, 2}) {
		t.Fatalf("restored missing %v", got)
	}
	if s := pl.fetcher.Stats(); s.BodiesWanted != 1 || s.Incomplete != 1 {
		t.Fatalf("restored %+v", s)
	}
}

// When the cache cannot vouch for a body — its announcement evicted, or
// its table too small (false misses) — the LeiosDB's answer is taken, and
// the state still agrees with it after every step.
func TestScriptCacheFallback(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache txcache.Options
	}{
		{"announcement evicted", txcache.Options{MaxAnnouncements: 1, TxCapacity: 1 << 10}},
		{"table full", txcache.Options{TxCapacity: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.TxCache = tc.cache })
			h.peerUp(peerA)
			shared := blocktest.NewEB(t, 300, blocktest.Seeds(0, 8)...)
			h.forge(5, shared)
			eb1 := blocktest.NewEB(t, 300, blocktest.Seeds(4, 12)...)
			eb2 := blocktest.NewEB(t, 300, 20, 21)
			p1 := h.announce(10, eb1)
			h.announce(11, eb2) // with room for one announcement, evicts eb1's
			h.must(h.p.insertBody(p1, eb1.Body, nil))
			if got := h.f.Missing(p1); !slices.Equal(got, []int{4, 5, 6, 7}) {
				t.Fatalf("%s misses %v, want the txs no EB holds (offsets 4..7)", p1, got)
			}
			h.offerClosure(peerA, p1)
			h.drain()
			if !h.complete(p1) {
				t.Fatal("closure not complete")
			}
		})
	}
}

// An offer whose size differs from the announced one, or of a point never
// announced, is ignored.
func TestScriptBogusOffers(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	eb := blocktest.NewEB(t, 300, 1, 2)
	p := h.announce(10, eb)
	h.f.BlockOffer(peerA, p, eb.Body.Size()+1)
	unknown := blocktest.NewEB(t, 300, 3)
	h.f.BlockOffer(peerA, unknown.Point(10), unknown.Body.Size())
	h.f.BlockTxsOffer(peerA, unknown.Point(10))
	h.check()
	if reqs := h.plan(); len(reqs) != 0 {
		t.Fatalf("planned on bogus offers: %v", reqs)
	}
}

// A body that declares a wrong size for a tx it misses is found out when
// the tx arrives: the LeiosDB drops the body, the logic rejects its points
// and releases its txs, and a tx only it wanted is not marked held.
func TestScriptBodyContradictedByTx(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	tx, other := blocktest.Tx(1, 300), blocktest.Tx(2, 300)
	liar, err := block.NewEBBody([]block.EBTx{
		{TxHash: block.HashBytes(tx), Size: 301},
		{TxHash: block.HashBytes(other), Size: 300},
	}, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	bad := &blocktest.EB{Body: liar, Txs: [][]byte{tx, other}}
	p := h.announce(10, bad)
	honest := blocktest.NewEB(t, 300, 2, 3) // shares `other`
	q := h.announce(11, honest)
	h.must(h.p.insertBody(p, liar, nil))
	h.must(h.p.insertBody(q, honest.Body, nil))
	h.must(h.p.insertTxs(p, []block.HashedTx{block.HashTx(tx)}, false))
	if st, _ := h.p.cache.LookupTx(block.HashBytes(tx)); st.Held() {
		t.Fatal("the cache vouches for a tx the LeiosDB dropped with its body")
	}
	h.offerClosure(peerA, p)
	h.offerClosure(peerA, q)
	for _, r := range h.drain() {
		if r.Point == p {
			t.Fatalf("request for the rejected EB: %v", r)
		}
	}
	if !h.complete(q) {
		t.Fatal("the honest EB sharing a tx did not complete")
	}
}

// Pruning an incomplete EB keeps the txs a surviving EB still misses.
func TestScriptPruneKeepsSharedNeeds(t *testing.T) {
	h := newHarness(t)
	h.peerUp(peerA)
	old, fresh := blocktest.NewEB(t, 300, 1, 2, 3), blocktest.NewEB(t, 300, 3, 4)
	pOld, pFresh := h.announce(5, old), h.announce(20, fresh)
	h.must(h.p.insertBody(pOld, old.Body, nil))
	h.must(h.p.insertBody(pFresh, fresh.Body, nil))
	h.must(h.p.Prune(10))
	if s := h.f.Stats(); s.MissingTxs != 2 || s.Points != 1 {
		t.Fatalf("after prune: %+v, want the 2 txs of the fresh EB", s)
	}
	h.offerClosure(peerA, pFresh)
	all := h.drain()
	if len(txRequests(all)) != 2 || !h.complete(pFresh) {
		t.Fatalf("requests %v; complete %v", all, h.complete(pFresh))
	}
}
