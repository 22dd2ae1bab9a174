package consensus

import (
	"cmp"
	"math/big"
	"slices"
)

// faitAccompli returns the persistent seats that Fait Accompli committee
// selection (its weighted scheme, wFA) gives a committee of n seats over
// pools with these stakes: the indices of the persistent pools, ascending.
//
// The pools are sorted by stake, largest first, ties in index order, so
// the result depends on nothing but the stakes and their order. With s_i
// the i-th largest stake (1-based) and ρ_i = s_i + s_{i+1} + … the stake
// from i on, i* is the least i for which
//
//	ρ_i = 0   or   (1 − s_i/ρ_i)² ≥ (n − i)/(n − i + 1),
//
// and the pools before i* are persistent: n₁ = i* − 1 of them, always
// fewer than n (at i = n the right side is 0). A pool is persistent while
// it holds so much of the stake left that sampling the remaining seats by
// stake would almost surely give it one anyway.
//
// Fait Accompli fills the other n − n₁ seats per election by local
// sortition among the pools that are not persistent; this function does
// not, and neither does the committee built on it.
func faitAccompli(stakes []uint64, n int) []int {
	order := make([]int, len(stakes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(stakes[b], stakes[a]) })

	// ρ for every position, summed from the smallest stake up.
	rho := make([]*big.Int, len(order)+1)
	rho[len(order)] = new(big.Int)
	for k := len(order) - 1; k >= 0; k-- {
		rho[k] = new(big.Int).Add(rho[k+1], new(big.Int).SetUint64(stakes[order[k]]))
	}

	persistent := 0
	for k := range order { // k = i − 1
		if !stillPersistent(new(big.Int).SetUint64(stakes[order[k]]), rho[k], n, k+1) {
			break
		}
		persistent++
	}
	chosen := order[:persistent]
	slices.Sort(chosen)
	return chosen
}

// stillPersistent reports whether the i-th largest pool, of stake s with
// ρ the stake from it on, is persistent in a committee of n seats: the
// negation of the stopping rule, cross-multiplied so it stays in integers,
//
//	ρ ≠ 0   and   (n − i + 1)·(ρ − s)² < (n − i)·ρ².
func stillPersistent(s, rho *big.Int, n, i int) bool {
	if rho.Sign() == 0 || i >= n {
		return false
	}
	rest := new(big.Int).Sub(rho, s)
	lhs := new(big.Int).Mul(rest, rest)
	lhs.Mul(lhs, big.NewInt(int64(n-i+1)))
	rhs := new(big.Int).Mul(rho, rho)
	rhs.Mul(rhs, big.NewInt(int64(n-i)))
	return lhs.Cmp(rhs) < 0
}
