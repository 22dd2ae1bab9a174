package consensus

import (
	"cmp"
	"math/big"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestFaitAccompliTable: results derived by hand from the definition. With
// s_i the i-th largest stake, ρ_i the stake from i on, pool i is persistent
// while (1 − s_i/ρ_i)² < (n − i)/(n − i + 1):
//
//	[3000 500 200 100 100 50 40 10], n = 5: 1/16 < 4/5, 1/4 < 3/4,
//	  9/25 < 2/3, 4/9 < 1/2, then i = 5 = n stops: the four largest.
//	the same, n = 3: 1/16 < 2/3, 1/4 < 1/2, then i = 3 = n: two.
//	[50 20 10 5 5 5 5], n = 5: 1/4 < 4/5, 9/25 < 3/4, 4/9 < 2/3, then
//	  (1 − 5/20)² = 9/16 ≥ 1/2 stops early: three, 80 % of the stake.
//	[1000 1 1 1 1], n = 3: (4/1004)² < 2/3, then 9/16 ≥ 1/2: the whale.
//	ten pools of 1, n = 5: (9/10)² = 81/100 ≥ 4/5 at once: none.
//	[1 10 1 10 10], n = 3: sorted 10 10 10 1 1 by stake, ties in genesis
//	  order (pools 1, 3, 4); (22/32)² < 2/3, (12/22)² < 1/2, then i = 3:
//	  pools 1 and 3, not the tied pool 4.
//	[5 0 0], n = 10: (1 − 5/5)² = 0 < 9/10, then ρ_2 = 0 stops: pool 0.
func TestFaitAccompliTable(t *testing.T) {
	for _, tc := range []struct {
		stakes []uint64
		n      int
		want   []int
	}{
		{[]uint64{3000, 500, 200, 100, 100, 50, 40, 10}, 5, []int{0, 1, 2, 3}},
		{[]uint64{3000, 500, 200, 100, 100, 50, 40, 10}, 3, []int{0, 1}},
		{[]uint64{10, 40, 100, 3000, 50, 100, 200, 500}, 5, []int{2, 3, 6, 7}}, // the first, shuffled
		{[]uint64{50, 20, 10, 5, 5, 5, 5}, 5, []int{0, 1, 2}},
		{[]uint64{1000, 1, 1, 1, 1}, 3, []int{0}},
		{[]uint64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 5, []int{}},
		{[]uint64{1, 10, 1, 10, 10}, 3, []int{1, 3}},
		{[]uint64{5, 0, 0}, 10, []int{0}},
		{[]uint64{5, 0, 0}, 1, []int{}},
	} {
		if got := faitAccompli(tc.stakes, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("faitAccompli(%v, %d) = %v, want %v", tc.stakes, tc.n, got, tc.want)
		}
	}
}

// faitAccompliReference is the definition read literally, in rationals:
// the least i with ρ_i = 0 or (1 − s_i/ρ_i)² ≥ (n − i)/(n − i + 1).
func faitAccompliReference(stakes []uint64, n int) int {
	sorted := slices.Clone(stakes)
	slices.SortFunc(sorted, func(a, b uint64) int { return cmp.Compare(b, a) })
	for i := 1; ; i++ {
		rho := new(big.Rat)
		for _, s := range sorted[min(i-1, len(sorted)):] {
			rho.Add(rho, new(big.Rat).SetUint64(s))
		}
		if rho.Sign() == 0 {
			return i - 1
		}
		x := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(new(big.Rat).SetUint64(sorted[i-1]), rho))
		if x.Mul(x, x).Cmp(big.NewRat(int64(n-i), int64(n-i+1))) >= 0 {
			return i - 1
		}
	}
}

// TestFaitAccompliProperties on skewed stake distributions (a few whales,
// a long tail, ties): the result is deterministic, has fewer than n pools,
// holds the largest stakes (ties to the earlier pool), and agrees with the
// definition read literally.
func TestFaitAccompliProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pools := rapid.IntRange(1, 60).Draw(t, "pools")
		stakes := make([]uint64, pools)
		for i := range stakes {
			// Stakes spread over many orders of magnitude, with repeats.
			stakes[i] = rapid.Uint64Range(0, 9).Draw(t, "mantissa") << rapid.UintRange(0, 50).Draw(t, "exponent")
		}
		n := rapid.IntRange(1, 2*pools).Draw(t, "n")

		got := faitAccompli(stakes, n)
		if again := faitAccompli(slices.Clone(stakes), n); !slices.Equal(got, again) {
			t.Fatalf("not deterministic: %v then %v", got, again)
		}
		if len(got) >= n {
			t.Fatalf("%d persistent seats of %d", len(got), n)
		}
		if want := faitAccompliReference(stakes, n); len(got) != want {
			t.Fatalf("%d persistent, the definition gives %d", len(got), want)
		}
		chosen := map[int]bool{}
		for _, i := range got {
			chosen[i] = true
			if stakes[i] == 0 {
				t.Fatalf("pool %d without stake is persistent", i)
			}
		}
		for i := range stakes {
			for j := range stakes {
				if chosen[i] && !chosen[j] && (stakes[i] < stakes[j] || stakes[i] == stakes[j] && i > j) {
					t.Fatalf("pool %d (stake %d) is persistent, pool %d (stake %d) is not", i, stakes[i], j, stakes[j])
				}
			}
		}
	})
}
