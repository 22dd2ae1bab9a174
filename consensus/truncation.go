package consensus

import (
	"bytes"
	"cmp"
	"math/big"
	"slices"
)

// truncate returns the voting committee that CIP-0164's stake-based
// truncation chooses among pools of these stakes and pool ids: the indices
// of its members, in seat order.
//
// The CIP's rule ("Committee Selection"): order pools by active stake,
// descending; accumulate stake until the cumulative-stake target σ_c is
// reached; the pools accumulated are the committee. Where the CIP leaves a
// choice, this is the one made:
//
//   - The pool whose stake makes the sum reach σ_c of the total is a
//     member, and the pools after it are not: the committee is the first k
//     pools, k the least with s₁ + … + s_k ≥ σ_c · total. (The CIP's other
//     phrasing, "until the truncation error falls below 1 − σ_c", would take
//     one pool more when the sum lands on σ_c · total exactly; "reached" is
//     taken.)
//   - Equal stakes, on which the CIP is silent, are ordered by pool id
//     (Blake2b-224 of the cold key), ascending: the order of the ledger's
//     stake distribution, so any implementation that sorts it stably by
//     stake agrees. A pool tied with the last member but after it in that
//     order is left out.
//   - A pool without stake is never a member: with σ_c ≤ 1 the sum reaches
//     σ_c · total by the last pool with stake (the genesis check refuses a
//     total of 0).
//
// The comparison is exact, in integers: den(σ_c)·Σ ≥ num(σ_c)·total.
func truncate(stakes []uint64, ids [][28]byte, sigma *big.Rat) []int {
	order := make([]int, len(stakes))
	total := new(big.Int)
	for i, s := range stakes {
		order[i] = i
		total.Add(total, new(big.Int).SetUint64(s))
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(stakes[b], stakes[a]); c != 0 {
			return c
		}
		return bytes.Compare(ids[a][:], ids[b][:])
	})
	target := new(big.Int).Mul(sigma.Num(), total)
	sum, scaled := new(big.Int), new(big.Int)
	for k, i := range order {
		sum.Add(sum, new(big.Int).SetUint64(stakes[i]))
		if scaled.Mul(sigma.Denom(), sum).Cmp(target) >= 0 {
			return order[:k+1]
		}
	}
	return order // no pools
}
