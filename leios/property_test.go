package leios

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/txcache"
)

// TestPropertyDecisions drives the handlers and the decision logic with
// random announcements (EBs sharing txs, the same EB at several slots),
// offers, plans, replies, failures, peers coming and going, forging and
// pruning, under tight budgets. After every step the state must agree with
// the LeiosDB and the budgets hold (CheckConsistency); every planned
// request must go to a peer that offered what it asks, never ask for a
// held body, and ask for txs under a real point whose body holds them and
// misses them; and in the end, with every peer up and offering, every
// closure completes.
func TestPropertyDecisions(t *testing.T) {
	root := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp(root, "")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		h := &harness{t: rt, now: time.Unix(1_000_000, 0), world: make(map[block.Hash]*blocktest.EB)}
		opts := testOptions(t)
		opts.Dir, opts.Now = dir, func() time.Time { return h.now }
		opts.TxCache = txcache.Options{TxCapacity: 1 << 10}
		opts.Fetch = fetch.Options{
			MaxInFlightBytes:     rapid.Uint64Range(3_000, 20_000).Draw(rt, "total"),
			MaxPeerInFlightBytes: rapid.Uint64Range(3_000, 10_000).Draw(rt, "perPeer"),
			MaxRequestBytes:      rapid.Uint64Range(3_000, 6_000).Draw(rt, "perRequest"),
			MaxRequestsPerPeer:   rapid.IntRange(1, 4).Draw(rt, "requestsPerPeer"),
			HedgeAfter:           time.Second,
			Syncing:              func() bool { return false },
		}
		if h.p, err = Open(opts); err != nil {
			rt.Fatal(err)
		}
		defer h.p.Close()
		h.f = h.p.fetcher

		// A pool of EBs over 40 txs (so they share), txs of 200..3,000 bytes.
		var pool []*blocktest.EB
		for i := range rapid.IntRange(1, 6).Draw(rt, "ebs") {
			n := rapid.IntRange(1, 12).Draw(rt, fmt.Sprintf("eb%d-txs", i))
			picked := rapid.SliceOfNDistinct(rapid.Uint64Range(0, 39), n, n, rapid.ID).Draw(rt, fmt.Sprintf("eb%d", i))
			var txs [][]byte
			for _, s := range picked {
				txs = append(txs, blocktest.Tx(s, 200+int(s%10)*300))
			}
			eb := blocktest.EBOf(rt, txs)
			pool = append(pool, eb)
			h.learn(eb)
		}
		peers := []peer.ID{peerA, peerB, peerC}
		up := map[peer.ID]bool{}
		bodyOffered := map[peer.ID]map[block.Point]bool{}
		closureOffered := map[peer.ID]map[block.Point]bool{}
		for _, id := range peers {
			bodyOffered[id], closureOffered[id] = map[block.Point]bool{}, map[block.Point]bool{}
		}
		var points []block.Point
		inFlight := map[uint64]*fetch.Request{}
		floor := uint64(0)

		drawPoint := func(label string) (block.Point, bool) {
			if len(points) == 0 {
				return block.Point{}, false
			}
			return rapid.SampledFrom(points).Draw(rt, label), true
		}
		plan := func() {
			held := map[block.Point]bool{}
			for _, p := range points {
				if info, ok, _ := h.p.db.PointInfo(p); ok && info.HasBody {
					held[p] = true
				}
			}
			for _, r := range h.plan() {
				switch r.Kind {
				case fetch.RequestBody:
					if held[r.Point] {
						rt.Fatalf("held body requested: %v", r)
					}
					if !bodyOffered[r.Peer][r.Point] && !closureOffered[r.Peer][r.Point] {
						rt.Fatalf("body requested from a peer that did not offer it: %v", r)
					}
				case fetch.RequestTxs:
					if !closureOffered[r.Peer][r.Point] {
						rt.Fatalf("txs requested from a peer that did not offer the closure: %v", r)
					}
					missing, err := h.p.db.Missing(r.Point)
					if err != nil {
						rt.Fatalf("txs requested under %s: %v", r.Point, err)
					}
					for i, off := range r.Offsets {
						if h.world[r.Point.Hash].Body.Txs[off].TxHash != r.TxHashes[i] || !containsInt(missing, off) {
							rt.Fatalf("request %v: offset %d is not a missing tx of its point", r, off)
						}
					}
				}
				if !up[r.Peer] {
					rt.Fatalf("request to a peer that is down: %v", r)
				}
				inFlight[r.ID] = r
			}
		}

		rt.Repeat(map[string]func(*rapid.T){
			"announce": func(rt *rapid.T) {
				eb := rapid.SampledFrom(pool).Draw(rt, "eb")
				slot := rapid.Uint64Range(floor, floor+20).Draw(rt, "slot")
				h.must(h.p.insertAnnouncement(slot, rbHash(slot, eb), eb.Announcement()))
				points = appendNew(points, eb.Point(slot))
			},
			"offer body": func(rt *rapid.T) {
				if p, ok := drawPoint("point"); ok {
					id := rapid.SampledFrom(peers).Draw(rt, "peer")
					h.offerBody(id, p)
					bodyOffered[id][p] = true
				}
			},
			"offer closure": func(rt *rapid.T) {
				if p, ok := drawPoint("point"); ok {
					id := rapid.SampledFrom(peers).Draw(rt, "peer")
					h.offerClosure(id, p)
					closureOffered[id][p] = true
				}
			},
			"peer up": func(rt *rapid.T) {
				id := rapid.SampledFrom(peers).Draw(rt, "peer")
				if !up[id] {
					up[id] = true
					h.peerUp(id)
				}
			},
			"peer down": func(rt *rapid.T) {
				id := rapid.SampledFrom(peers).Draw(rt, "peer")
				if up[id] {
					up[id] = false
					h.peerDown(id)
					for rid, r := range inFlight {
						if r.Peer == id {
							delete(inFlight, rid)
						}
					}
				}
			},
			"plan": func(rt *rapid.T) { plan() },
			"reply": func(rt *rapid.T) {
				if r := drawRequest(rt, inFlight); r != nil {
					delete(inFlight, r.ID)
					h.reply(r)
				}
			},
			"fail": func(rt *rapid.T) {
				if r := drawRequest(rt, inFlight); r != nil {
					delete(inFlight, r.ID)
					h.fail(r)
					delete(closureOffered[r.Peer], r.Point)
					if r.Kind == fetch.RequestBody {
						delete(bodyOffered[r.Peer], r.Point)
					}
				}
			},
			"forge": func(rt *rapid.T) {
				eb := rapid.SampledFrom(pool).Draw(rt, "eb")
				slot := rapid.Uint64Range(floor, floor+20).Draw(rt, "slot")
				h.forge(slot, eb)
				points = appendNew(points, eb.Point(slot))
			},
			"prune": func(rt *rapid.T) {
				floor += rapid.Uint64Range(0, 5).Draw(rt, "advance")
				h.must(h.p.Prune(floor))
				kept := points[:0]
				for _, p := range points {
					if p.Slot >= floor {
						kept = append(kept, p)
					}
				}
				points = kept
			},
			"tick": func(rt *rapid.T) {
				h.now = h.now.Add(time.Duration(rapid.IntRange(1, 1500).Draw(rt, "ms")) * time.Millisecond)
			},
		})

		// Liveness: every peer up and offering every closure, the fetch
		// logic completes every closure.
		for _, r := range inFlight {
			h.reply(r)
		}
		for _, id := range peers {
			if !up[id] {
				h.peerUp(id)
				up[id] = true
			}
		}
		for _, p := range points {
			h.offerClosure(peerA, p)
			closureOffered[peerA][p] = true
		}
		for range 1000 {
			if len(inFlight) == 0 {
				plan()
				if len(inFlight) == 0 {
					break
				}
			}
			for id, r := range inFlight {
				delete(inFlight, id)
				h.reply(r)
			}
		}
		for _, p := range points {
			if !h.complete(p) {
				rt.Fatalf("%s never completed", p)
			}
		}
	})
}

func drawRequest(rt *rapid.T, inFlight map[uint64]*fetch.Request) *fetch.Request {
	if len(inFlight) == 0 {
		return nil
	}
	ids := make([]uint64, 0, len(inFlight))
	for id := range inFlight {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return inFlight[rapid.SampledFrom(ids).Draw(rt, "request")]
}

func appendNew(points []block.Point, p block.Point) []block.Point {
	for _, q := range points {
		if q == p {
			return points
		}
	}
	return append(points, p)
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
