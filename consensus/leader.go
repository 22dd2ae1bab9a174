package consensus

import (
	"encoding/binary"
	"math/big"

	"golang.org/x/crypto/blake2b"
)

// This file is the Praos leader check (docs/protocol.md, "Linear Leios"): a pool with relative
// stake σ leads a slot when its VRF output's leader value, read as a
// fraction p of 2^256, is below 1 - (1-f)^σ.
//
// Every node must reach the same verdict, so the comparison never touches
// float64. It is cardano-ledger's checkLeaderNatValue: with q = 1 - p and
// c = ln(1 - f), p < 1 - (1-f)^σ  ⟺  1/q < exp(-σ·c), and the right side is
// summed as a Taylor series only until it is clearly above or below 1/q
// (taylorExpCmp). The arithmetic is cardano's FixedPoint: integers scaled
// by 10^34, every product and quotient rounded down. ln(1 - f) comes from a
// series of its own (lnFixed), exact to the last of those digits, so a
// verdict can differ from cardano-ledger's only within about 10^-32 of the
// threshold.

// VRFInput is the VRF input (alpha) for a slot:
// Blake2b-256(slot as 8 bytes big-endian ‖ epoch nonce), as Praos builds it.
// The prototype has no epochs; the devnet's nonce is fixed in the genesis.
func VRFInput(slot uint64, epochNonce [32]byte) []byte {
	var msg [8 + 32]byte
	binary.BigEndian.PutUint64(msg[:8], slot)
	copy(msg[8:], epochNonce[:])
	h := blake2b.Sum256(msg[:])
	return h[:]
}

// LeaderValue is the leader value of a VRF output: Blake2b-256("L" ‖ output),
// the range extension Praos uses so the leader check and the nonce draw on
// independent bits of one VRF output.
func LeaderValue(vrfOutput [64]byte) [32]byte {
	var msg [1 + 64]byte
	msg[0] = 'L'
	copy(msg[1:], vrfOutput[:])
	return blake2b.Sum256(msg[:])
}

// IsLeader reports whether a VRF output makes a pool with relative stake
// sigma leader under active slot coefficient f: whether LeaderValue, as a
// 256-bit big-endian natural, is below 2^256 · (1 - (1-f)^sigma).
//
// sigma is expected in [0, 1] and f in (0, 1]. A pool with no stake
// (sigma ≤ 0) never leads, even when f = 1 (cardano-ledger lets it); with
// f = 1 every pool with stake leads every slot; f outside (0, 1] leads
// nobody. Verdicts within about 10^-32 of the threshold are decided by the
// fixed-point arithmetic, identically on every node.
func IsLeader(vrfOutput [64]byte, sigma, f *big.Rat) bool {
	return leaderValueWins(LeaderValue(vrfOutput), sigma, f)
}

// leaderValueWins is IsLeader for a leader value.
func leaderValueWins(leaderValue [32]byte, sigma, f *big.Rat) bool {
	if sigma == nil || f == nil || sigma.Sign() <= 0 || f.Sign() <= 0 {
		return false
	}
	switch f.Cmp(big.NewRat(1, 1)) {
	case 1:
		return false
	case 0:
		return true // ln(1 - f) is undefined; the threshold is 2^256
	}

	one := fixedOne()
	// c = ln(1 - f), negative.
	c := lnFixed(new(big.Rat).Sub(big.NewRat(1, 1), f))
	// x = -σ · c = σ · |c|, rounded down.
	x := new(big.Int).Neg(c)
	x.Mul(x, sigma.Num())
	x.Quo(x, sigma.Denom())
	// 1/q = 2^256 / (2^256 - leader value), rounded down.
	certNatMax := new(big.Int).Lsh(big.NewInt(1), 256)
	recipQ := new(big.Int).Sub(certNatMax, new(big.Int).SetBytes(leaderValue[:]))
	recipQ.Quo(new(big.Int).Mul(certNatMax, one), recipQ)

	// Leader iff 1/q < exp(x). MaxReached (no verdict after 1000 terms)
	// counts as not leader, as in cardano-ledger.
	return taylorExpCmp(big.NewInt(3), recipQ, x) == expBelow
}

// fixedDigits is the precision of cardano's FixedPoint (Data.Fixed E34).
const fixedDigits = 34

// fixedOne is 1 in fixed point: 10^34.
func fixedOne() *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(fixedDigits), nil) }

type expComparison int

const (
	expAbove      expComparison = iota // the compared value is above exp(x)
	expBelow                           // the compared value is below exp(x)
	expMaxReached                      // no verdict within the term budget
)

// taylorExpCmp compares cmp with exp(x) for fixed-point cmp and x ≥ 0, as
// cardano-ledger's taylorExpCmp: add the terms x^n/n! one at a time and stop
// as soon as cmp lies outside [sum - bound·next, sum + bound·next].
//
// cardano's bound of 3 holds for the tail only once x/(n+1) ≤ 2/3 (the tail
// is then at most 3 times its first term); cardano relies on x < 2, which
// f ≤ 0.86 guarantees. Here no verdict is taken before that point, so the
// comparison stays sound for any x; for x ≤ 2 it takes cardano's steps.
func taylorExpCmp(boundX, cmp, x *big.Int) expComparison {
	const maxN = 1000
	one := fixedOne()
	acc := new(big.Int).Set(one) // sum of the terms so far
	term := new(big.Int).Set(x)  // the next term, x^n/n!
	divisor := int64(1)
	threeX := new(big.Int).Mul(x, big.NewInt(3))
	for n := 0; n < maxN; n++ {
		acc.Add(acc, term)
		divisor++
		// term = term · x / divisor, each step rounded down as FixedPoint does.
		term.Mul(term, x)
		term.Quo(term, one)
		term.Quo(term, big.NewInt(divisor))
		errorTerm := new(big.Int).Mul(term, boundX)

		// Tail ≤ 3·term holds iff 3x ≤ 2·(divisor+1).
		tailBounded := threeX.Cmp(new(big.Int).Mul(one, big.NewInt(2*(divisor+1)))) <= 0
		if !tailBounded {
			continue
		}
		if cmp.Cmp(new(big.Int).Add(acc, errorTerm)) >= 0 {
			return expAbove
		}
		if cmp.Cmp(new(big.Int).Sub(acc, errorTerm)) < 0 {
			return expBelow
		}
	}
	return expMaxReached
}

// lnGuardDigits are extra decimal digits carried while computing ln, so the
// rounded-down result is ln to the last fixed-point digit.
const lnGuardDigits = 10

// lnFixed is ln(y) in fixed point, rounded down, for a rational 0 < y ≤ 1.
// With w = 1/y = 2^m · r, r in [1, 2): ln y = -(m·ln 2 + ln r), and
// ln r = 2·atanh((r-1)/(r+1)) converges fast since (r-1)/(r+1) < 1/3.
func lnFixed(y *big.Rat) *big.Int {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(fixedDigits+lnGuardDigits), nil)
	w := new(big.Rat).Inv(y)
	// m = floor(log2 w): the bit lengths give it or one more.
	m := w.Num().BitLen() - w.Denom().BitLen()
	if w.Num().Cmp(new(big.Int).Lsh(w.Denom(), uint(m))) < 0 {
		m--
	}
	r := new(big.Rat).SetFrac(w.Num(), new(big.Int).Lsh(w.Denom(), uint(m)))
	// z = (r - 1) / (r + 1)
	z := new(big.Rat).Quo(new(big.Rat).Sub(r, big.NewRat(1, 1)), new(big.Rat).Add(r, big.NewRat(1, 1)))

	lnW := atanhTimes2(big.NewRat(1, 3), scale) // ln 2
	lnW.Mul(lnW, big.NewInt(int64(m)))
	lnW.Add(lnW, atanhTimes2(z, scale))
	// ln y = -ln w; drop the guard digits rounding down (Div floors).
	lnY := lnW.Neg(lnW)
	return lnY.Div(lnY, new(big.Int).Exp(big.NewInt(10), big.NewInt(lnGuardDigits), nil))
}

// atanhTimes2 is 2·atanh(z) = 2·Σ z^(2k+1)/(2k+1), in fixed point of the
// given scale, for a rational 0 ≤ z ≤ 1/3.
func atanhTimes2(z *big.Rat, scale *big.Int) *big.Int {
	zf := new(big.Int).Mul(z.Num(), scale)
	zf.Quo(zf, z.Denom())
	z2 := new(big.Int).Mul(zf, zf)
	z2.Quo(z2, scale)
	sum := new(big.Int)
	power := zf // z^(2k+1)
	for k := int64(0); power.Sign() > 0; k++ {
		sum.Add(sum, new(big.Int).Quo(power, big.NewInt(2*k+1)))
		power.Mul(power, z2)
		power.Quo(power, scale)
	}
	return sum.Lsh(sum, 1)
}
