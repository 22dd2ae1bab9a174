package benchkeys

import (
	"testing"

	"github.com/leiosnode/leiosnode/block"
)

// The first splitmix64 outputs from state 0, as published with the reference
// implementation (and in java.util.SplittableRandom's tests).
func TestSplitMix64KnownOutputs(t *testing.T) {
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	var state uint64
	for i, w := range want {
		if got := SplitMix64(&state); got != w {
			t.Fatalf("output %d = %#x, want %#x", i, got, w)
		}
	}
}

func TestKeysAreDistinctAcrossDomains(t *testing.T) {
	seen := make(map[block.Hash]string)
	add := func(h block.Hash, what string) {
		if prev, dup := seen[h]; dup {
			t.Fatalf("%s collides with %s", what, prev)
		}
		seen[h] = what
	}
	for eb := range 4 {
		add(EBHash(eb), "eb")
		add(RBHash(eb), "rb")
		for i, tx := range EBTxs(eb, 100) {
			add(tx.TxHash, "tx")
			if tx.TxHash != TxKey(eb, i) {
				t.Fatalf("EBTxs(%d)[%d] is not TxKey", eb, i)
			}
		}
	}
	for i := range 100 {
		add(MissKey(i), "miss")
	}
}

func TestLookupBatchHitRatio(t *testing.T) {
	for _, pct := range []int{0, 20, 40, 60, 80, 100} {
		batch := LookupBatch(3, 1000, pct)
		hits := 0
		for i, h := range batch {
			if h == TxKey(2, i) && IsHit(i, pct) {
				hits++
			} else if h != MissKey(i) {
				t.Fatalf("%d%%: position %d is neither a hit nor a miss key", pct, i)
			}
		}
		if want := 1000 * pct / 100; hits != want || Hits(1000, pct) != want {
			t.Errorf("%d%%: %d hits (Hits says %d), want %d", pct, hits, Hits(1000, pct), want)
		}
	}
}
