package txcache

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/leiosnode/leiosnode/block"
)

// A slot is a key and a state word, and neither straddles a cache line.
func TestSlotLayout(t *testing.T) {
	tb := newTable(1<<19, 0, 1, nil) // large enough for huge-page alignment
	small := newTable(100, 0, 1, nil)
	for _, tb := range []*table{tb, small} {
		if got := unsafe.Sizeof(tb.keys[0]) + unsafe.Sizeof(tb.meta[0]); got != SlotBytes {
			t.Fatalf("slot is %d bytes, want %d", got, SlotBytes)
		}
		if a, b := uintptr(unsafe.Pointer(&tb.keys[0])), uintptr(unsafe.Pointer(&tb.meta[0])); a%cacheLine != 0 || b%cacheLine != 0 {
			t.Fatalf("keys at %#x, state words at %#x: want both on a cache line", a, b)
		}
	}
}

func TestSeedsDiffer(t *testing.T) {
	a, b := New(Options{TxCapacity: 8}), New(Options{TxCapacity: 8})
	if a.txs.seed == b.txs.seed {
		t.Fatalf("two caches drew the same seed %#x", a.txs.seed)
	}
}

// clusterTable fills a table whose keys all share one home, so they form one
// cluster.
func clusterTable(t *testing.T, n, home uint64, keys int) (*table, []block.Hash) {
	t.Helper()
	tb := newTable(n, 0, 1, func(block.Hash) uint64 { return home })
	hashes := make([]block.Hash, keys)
	for i := range hashes {
		hashes[i] = testHash('c', i)
		k := keyOf(&hashes[i])
		if _, ok := tb.addRef(&k, tb.home(&hashes[i]), tb.tag(&k)); !ok {
			t.Fatalf("insert %d refused", i)
		}
	}
	checkTable(t, tb)
	return tb, hashes
}

// An adversarial cluster: every key has the same home. Deleting any of them
// must leave all others findable, by readers and by the writer.
func TestClusterDeleteKeepsOthersReachable(t *testing.T) {
	const n, home, keys = 64, 56, 24 // the cluster runs past the homes into the tail: 56..79
	for _, del := range [][]int{
		{0}, {11}, {7}, {8}, {keys - 1}, // first, middle, around the end of the homes, last
		{3, 4, 5}, {20, 2, 13, 0}, {23, 22, 21, 20},
	} {
		t.Run(fmt.Sprint(del), func(t *testing.T) {
			tb, hashes := clusterTable(t, n, home, keys)
			gone := make(map[int]bool)
			for _, d := range del {
				k := keyOf(&hashes[d])
				tb.release(&k, tb.home(&hashes[d]), tb.tag(&k))
				gone[d] = true
				checkTable(t, tb)
			}
			for i, h := range hashes {
				k := keyOf(&h)
				w := tb.lookup(&k, tb.home(&h), tb.tag(&k))
				_, found, _ := tb.probe(&k, tb.home(&h), tb.tag(&k))
				if found != (w != 0) {
					t.Fatalf("key %d: reader and writer disagree", i)
				}
				if found == gone[i] {
					t.Fatalf("key %d: found %v after deleting %v", i, found, del)
				}
			}
		})
	}
}

// Two interleaved clusters: a deletion must not shift an entry before its
// home, even when the hole is right behind it.
func TestDeleteKeepsEntriesAtOrAfterHome(t *testing.T) {
	homes := map[block.Hash]uint64{}
	tb := newTable(16, 0, 1, func(h block.Hash) uint64 { return homes[h] })
	// Homes 3,3,4,4,5,3: the cluster is slots 3..8; entries with home 4 and 5
	// may move back only as far as their homes.
	var hashes []block.Hash
	for i, home := range []uint64{3, 3, 4, 4, 5, 3} {
		h := testHash('i', i)
		homes[h] = home
		hashes = append(hashes, h)
		k := keyOf(&h)
		if _, ok := tb.addRef(&k, tb.home(&h), tb.tag(&k)); !ok {
			t.Fatalf("insert %d refused", i)
		}
	}
	for _, d := range []int{0, 2, 1} {
		k := keyOf(&hashes[d])
		tb.release(&k, tb.home(&hashes[d]), tb.tag(&k))
		checkTable(t, tb)
	}
	for _, i := range []int{3, 4, 5} {
		k := keyOf(&hashes[i])
		if tb.lookup(&k, tb.home(&hashes[i]), tb.tag(&k)) == 0 {
			t.Fatalf("key %d lost", i)
		}
	}
}

// A full table refuses inserts and counts them; lookups of absent keys stay
// misses and terminate.
func TestFullTableRefuses(t *testing.T) {
	// 8 homes, probe bound 8: 15 slots. Keys 0..7 take their homes, key 8
	// finds the window of home 0 full, keys 9..15 fill slots 8..14, the rest
	// find every window full.
	tb := newTable(8, 0, 1, func(h block.Hash) uint64 { return uint64(h[0]) })
	var hashes []block.Hash
	for i := range 20 {
		h := testHash('f', i)
		k := keyOf(&h)
		if _, ok := tb.addRef(&k, tb.home(&h), tb.tag(&k)); ok {
			hashes = append(hashes, h)
		}
	}
	if len(hashes) != 15 || tb.refused.Load() != 5 {
		t.Fatalf("held %d, refused %d; want 15 and 5", len(hashes), tb.refused.Load())
	}
	checkTable(t, tb)
	absent := testHash('f', 99)
	k := keyOf(&absent)
	if w := tb.lookup(&k, tb.home(&absent), tb.tag(&k)); w != 0 {
		t.Fatalf("absent key found in a full table")
	}
	for _, h := range hashes {
		k := keyOf(&h)
		tb.release(&k, tb.home(&h), tb.tag(&k))
		checkTable(t, tb)
	}
	if tb.occupied != 0 {
		t.Fatalf("%d slots still used", tb.occupied)
	}
}

// The probe bound caps a cluster: past it, inserts are refused rather than
// displaced further.
func TestProbeBound(t *testing.T) {
	tb := newTable(32, 4, 1, func(block.Hash) uint64 { return 10 })
	held := 0
	for i := range 6 {
		h := testHash('p', i)
		k := keyOf(&h)
		if _, ok := tb.addRef(&k, tb.home(&h), tb.tag(&k)); ok {
			held++
		}
	}
	if held != 4 {
		t.Fatalf("held %d keys with one home and probe bound 4", held)
	}
	checkTable(t, tb)
}

// A lookup validates the stripes of its probe window: a deletion in progress
// (odd sequence word) in either makes it retry; one elsewhere does not.
func TestLookupValidatesItsWindowsStripes(t *testing.T) {
	homes := map[block.Hash]uint64{}
	tb := newTable(3*stripeSize, 0, 1, func(h block.Hash) uint64 { return homes[h] })
	for _, tc := range []struct {
		home uint64
		odd  uint64 // the stripe with a deletion in progress
		ok   bool
	}{
		{0, 0, false}, {0, 1, true},
		{stripeSize - 2, 0, false}, {stripeSize - 2, 1, false}, {stripeSize - 2, 2, true},
		{stripeSize, 0, true}, {stripeSize, 1, false},
	} {
		h := testHash('w', int(tc.home))
		homes[h] = tc.home
		k := keyOf(&h)
		tb.addRef(&k, tc.home, tb.tag(&k))
		tb.stripes[tc.odd].Add(1)
		if _, ok := tb.tryLookup(&k, tc.home, tb.tag(&k)); ok != tc.ok {
			t.Errorf("home %d, stripe %d odd: ok = %v, want %v", tc.home, tc.odd, ok, tc.ok)
		}
		tb.stripes[tc.odd].Add(1)
		if w, ok := tb.tryLookup(&k, tc.home, tb.tag(&k)); !ok || w == 0 {
			t.Errorf("home %d, no deletion: ok = %v, found = %v", tc.home, ok, w != 0)
		}
	}
}

// A deletion's shift that crosses a stripe boundary leaves every stripe even.
func TestDeleteAcrossStripesLeavesThemEven(t *testing.T) {
	tb, hashes := clusterTable(t, 3*stripeSize, stripeSize-3, 8) // slots 4093..4100
	for _, d := range []int{0, 4, 7, 1} {
		k := keyOf(&hashes[d])
		tb.release(&k, tb.home(&hashes[d]), tb.tag(&k))
		checkTable(t, tb) // includes: every stripe even
	}
	if tb.occupied != 4 {
		t.Fatalf("%d keys left, want 4", tb.occupied)
	}
}
