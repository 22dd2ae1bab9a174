package fetch

import (
	"fmt"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/txcache"
)

// BenchmarkDecideFullEB times the decisions for one full EB (13,888 txs of
// 864 bytes, a 12 MB closure) with its cache lookups: which txs are
// missing (the cache), filing them, and planning every request for ten
// peers that offered the closure. Target: ≤ 2 ms. Variants have part of
// the txs already held (shared with an earlier EB).
func BenchmarkDecideFullEB(b *testing.B) {
	const n, size = 13_888, 864
	eb := blocktest.NewEB(b, size, blocktest.Seeds(0, n)...)
	p := eb.Point(100)
	var peers = make([]string, 10)
	for i := range peers {
		peers[i] = fmt.Sprint(i)
	}
	for _, heldPct := range []int{0, 50, 100} {
		b.Run(fmt.Sprintf("held=%d%%", heldPct), func(b *testing.B) {
			cache := txcache.New(txcache.Options{TxCapacity: 1 << 16})
			held := n * heldPct / 100
			if held > 0 {
				// An earlier EB holding the first txs, inserted and marked.
				earlier := &block.EBBody{Txs: eb.Body.Txs[:held]}
				cache.InsertAnnouncement(1, block.Hash{1}, block.Hash{2})
				if _, err := cache.InsertBody(block.Hash{2}, earlier.Txs); err != nil {
					b.Fatal(err)
				}
				hashes := make([]block.Hash, held)
				for i := range hashes {
					hashes[i] = earlier.Txs[i].TxHash
				}
				cache.MarkInserted(hashes)
			}
			now := time.Unix(1_000_000, 0)
			var missing []int
			b.ReportAllocs()
			for b.Loop() {
				// A node's state before the EB's body arrives: ten peers up,
				// the EB announced, its closure offered. Not timed.
				b.StopTimer()
				d := newDecisions(Options{})
				for _, id := range peers {
					d.peerUp(peerID(id), false)
				}
				d.announce(p, eb.Body.Size())
				for _, id := range peers {
					d.offer(peerID(id), p, 0, true)
				}
				b.StartTimer()
				missing = cache.AppendMissing(missing[:0], eb.Body.Txs)
				d.bodyHeld(p, eb.Body, missing)
				reqs, _ := d.plan(now)
				if len(missing) != n-held || (len(missing) > 0 && len(reqs) == 0) {
					b.Fatalf("%d missing, %d requests", len(missing), len(reqs))
				}
			}
		})
	}
}
