package txcache

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/benchkeys"
)

// A batch runs its keys through the readers' pipeline a stage apart: its
// results must be exactly those of looking each key up alone. Batches of
// every length across the pipeline's group boundaries, keys present,
// absent and repeated, tables with crowded homes, long clusters, probe
// bounds under and over a line of state words, and deletions.
func TestBatchLookupAgreesWithSingleLookups(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.Uint64Range(8, 300).Draw(rt, "homes")
		maxProbe := rapid.SampledFrom([]uint64{1, 3, 7, 15, 16, 17, 40, defaultMaxProbe}).Draw(rt, "maxProbe")
		homes := map[block.Hash]uint64{}
		var hook func(block.Hash) uint64
		if rapid.IntRange(0, 3).Draw(rt, "crowded") > 0 {
			hook = func(h block.Hash) uint64 { return homes[h] }
		}
		tb := newTable(n, maxProbe, 1+rapid.Uint64Range(0, 1<<40).Draw(rt, "seed"), hook)
		spread := rapid.Uint64Range(1, min(n, 48)).Draw(rt, "spread") // homes of crowded keys
		universe := make([]block.Hash, 2*n)
		for i := range universe {
			universe[i] = testHash('b', i)
			homes[universe[i]] = uint64(i*7) % spread
		}
		// The table's contents and the batch are drawn from a seed, so a
		// table is as full as its fill, whatever rapid's bias to short
		// lists.
		rng := rapid.Uint64().Draw(rt, "rng")
		pick := func() int { return int(benchkeys.SplitMix64(&rng) % uint64(len(universe))) }
		fill := rapid.SampledFrom([]uint64{0, n / 4, n / 2, 3 * n / 4, n}).Draw(rt, "fill")
		for range fill {
			i := pick()
			k := keyOf(&universe[i])
			if kind, ok := tb.addRef(&k, tb.home(&universe[i]), tb.tag(&k)); ok && kind == TxNotYetInserted && i%3 != 0 {
				home, tag := tb.start(&k)
				tb.mark(&k, home, tag, TxState(2+i%2)) // inserted or validated
			}
		}
		for range rapid.Uint64Range(0, fill/2).Draw(rt, "deletes") {
			i := pick()
			k := keyOf(&universe[i])
			tb.release(&k, tb.home(&universe[i]), tb.tag(&k))
		}
		checkTable(rt, tb)

		batch := make([]block.Hash, rapid.IntRange(0, 3*inFlight*group).Draw(rt, "batch"))
		for i := range batch {
			batch[i] = universe[pick()]
		}
		out := make([]TxState, len(batch))
		held := tb.lookupBatch(batch, out)
		want, wantHeld := make([]TxState, len(batch)), 0
		var wantMissing []int
		for i, h := range batch {
			k := keyOf(&h)
			want[i] = stateKind(tb.lookup(&k, tb.home(&h), tb.tag(&k)))
			if want[i].Held() {
				wantHeld++
			} else {
				wantMissing = append(wantMissing, i)
			}
		}
		if !slices.Equal(out, want) || held != wantHeld {
			rt.Fatalf("batch says %v (%d held), one by one %v (%d held)", out, held, want, wantHeld)
		}
		txs := make([]block.EBTx, len(batch))
		for i, h := range batch {
			txs[i] = block.EBTx{TxHash: h, Size: 1}
		}
		if got := tb.appendMissing(nil, txs); !slices.Equal(got, wantMissing) {
			rt.Fatalf("appendMissing %v, one by one %v", got, wantMissing)
		}
	})
}

// appendMissing works through long lists in chunks: indexes run on across
// them.
func TestAppendMissingAcrossChunks(t *testing.T) {
	c := New(Options{TxCapacity: 4096})
	var body []block.EBTx
	for i := range 3 * missingChunk / 2 {
		body = append(body, block.EBTx{TxHash: testHash('m', i), Size: 1})
	}
	c.InsertAnnouncement(1, testHash('r', 0), testHash('e', 0))
	if _, err := c.InsertBody(testHash('e', 0), body[:missingChunk+7]); err != nil {
		t.Fatal(err)
	}
	var marks []block.Hash
	for i := 0; i < missingChunk+7; i += 2 {
		marks = append(marks, body[i].TxHash)
	}
	c.MarkInserted(marks)
	var want []int
	for i := range body {
		if i >= missingChunk+7 || i%2 == 1 {
			want = append(want, i)
		}
	}
	dst := []int{-1}
	if got := c.AppendMissing(dst, body); !slices.Equal(got, append([]int{-1}, want...)) {
		t.Fatalf("missing %v\nwant    %v", got, want)
	}
}
