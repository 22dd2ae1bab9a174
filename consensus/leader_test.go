package consensus

import (
	"encoding/hex"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

func TestVRFInputGolden(t *testing.T) {
	var nonce [32]byte
	for i := range nonce {
		nonce[i] = byte(i)
	}
	// Blake2b-256(0x00000000075bcd15 ‖ 00 01 … 1f), computed independently.
	const want = "d92fba7deddf84b4ee664090838bb520343e8fb89721c51bd37537274bb1256d"
	if got := hex.EncodeToString(VRFInput(123456789, nonce)); got != want {
		t.Errorf("VRFInput = %s, want %s", got, want)
	}
	if hex.EncodeToString(VRFInput(123456790, nonce)) == want {
		t.Error("VRFInput ignores the slot")
	}
}

func TestLeaderValueGolden(t *testing.T) {
	var out [64]byte
	for i := range out {
		out[i] = byte(i)
	}
	// Blake2b-256("L" ‖ 00 01 … 3f), computed independently.
	const want = "5ac759eb0e7c23c36ce750660cfef3fc461f3d973202b094b7e45d435adc30ab"
	if got := LeaderValue(out); hex.EncodeToString(got[:]) != want {
		t.Errorf("LeaderValue = %x, want %s", got, want)
	}
}

func TestLnFixed(t *testing.T) {
	// floor(ln(y) · 10^34), from a 80-digit decimal computation.
	for _, tc := range []struct {
		y    *big.Rat
		want string
	}{
		{big.NewRat(1, 2), "-6931471805599453094172321214581766"},
		{big.NewRat(9, 10), "-1053605156578263012275009808393128"},
		{big.NewRat(19, 20), "-512932943875505334261961442546873"},
		{big.NewRat(1, 1000000), "-138155105579642741041079487281061853"},
		{big.NewRat(1, 1), "0"},
	} {
		if got := lnFixed(tc.y).String(); got != tc.want {
			t.Errorf("lnFixed(%s) = %s, want %s", tc.y, got, tc.want)
		}
	}
}

// twoTo256 returns 2^256 as a big.Int.
func twoTo256() *big.Int { return new(big.Int).Lsh(big.NewInt(1), 256) }

// leaderValueOf encodes a natural below 2^256 as a leader value.
func leaderValueOf(n *big.Int) [32]byte {
	var lv [32]byte
	n.FillBytes(lv[:])
	return lv
}

func TestIsLeaderEdges(t *testing.T) {
	maxLV := new(big.Int).Sub(twoTo256(), big.NewInt(1))
	margin := new(big.Int).Lsh(big.NewInt(1), 160) // 2^-96 of the range: far above fixed-point error
	tenth := new(big.Int).Quo(twoTo256(), big.NewInt(10))
	half := new(big.Int).Lsh(big.NewInt(1), 255)
	pct := func(n *big.Int, num, den int64) *big.Int {
		return new(big.Int).Quo(new(big.Int).Mul(n, big.NewInt(num)), big.NewInt(den))
	}
	cases := []struct {
		name     string
		lv       *big.Int
		sigma, f *big.Rat
		want     bool
	}{
		{"zero value leads", big.NewInt(0), big.NewRat(1, 2), big.NewRat(1, 10), true},
		{"max value loses", maxLV, big.NewRat(1, 1), big.NewRat(1, 10), false},
		{"f = 1 always leads", maxLV, big.NewRat(1, 1), big.NewRat(1, 1), true},
		{"f = 1, small stake leads", maxLV, big.NewRat(1, 1000), big.NewRat(1, 1), true},
		{"no stake never leads, f = 1", big.NewInt(0), big.NewRat(0, 1), big.NewRat(1, 1), false},
		{"no stake never leads", big.NewInt(0), big.NewRat(0, 1), big.NewRat(1, 10), false},
		{"negative stake", big.NewInt(0), big.NewRat(-1, 2), big.NewRat(1, 10), false},
		{"f = 0", big.NewInt(0), big.NewRat(1, 1), big.NewRat(0, 1), false},
		{"f > 1", big.NewInt(0), big.NewRat(1, 1), big.NewRat(11, 10), false},
		{"nil sigma", big.NewInt(0), nil, big.NewRat(1, 10), false},
		{"nil f", big.NewInt(0), big.NewRat(1, 2), nil, false},
		// σ = 1: the threshold is exactly 2^256 · f.
		{"σ=1 just below f", new(big.Int).Sub(tenth, margin), big.NewRat(1, 1), big.NewRat(1, 10), true},
		{"σ=1 just above f", new(big.Int).Add(tenth, margin), big.NewRat(1, 1), big.NewRat(1, 10), false},
		// σ = 1/2, f = 3/4: (1-f)^σ = 1/2, the threshold is exactly 2^255.
		{"σ=1/2 just below half", new(big.Int).Sub(half, margin), big.NewRat(1, 2), big.NewRat(3, 4), true},
		{"σ=1/2 just above half", new(big.Int).Add(half, margin), big.NewRat(1, 2), big.NewRat(3, 4), false},
		// f close to 1 makes x = -σ·ln(1-f) ≈ 13.8: cardano's fixed bound of
		// 3 would stop after one term and wrongly say "above".
		{"f near 1 below", pct(twoTo256(), 9999989, 10000000), big.NewRat(1, 1), big.NewRat(999999, 1000000), true},
		{"f near 1 above", pct(twoTo256(), 9999991, 10000000), big.NewRat(1, 1), big.NewRat(999999, 1000000), false},
		// σ > 1 is outside the domain but still exact: (1/2)^2 = 1/4.
		{"σ=2 below", pct(twoTo256(), 74, 100), big.NewRat(2, 1), big.NewRat(1, 2), true},
		{"σ=2 above", pct(twoTo256(), 76, 100), big.NewRat(2, 1), big.NewRat(1, 2), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := leaderValueWins(leaderValueOf(tc.lv), tc.sigma, tc.f); got != tc.want {
				t.Errorf("leader = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsLeaderAlwaysAndNever(t *testing.T) {
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	one, tenth, zero := big.NewRat(1, 1), big.NewRat(1, 10), big.NewRat(0, 1)
	for range 1000 {
		var out [64]byte
		fillRandom(rng, out[:])
		if !IsLeader(out, one, one) {
			t.Fatalf("σ = 1, f = 1: output %x does not lead", out)
		}
		if IsLeader(out, zero, tenth) || IsLeader(out, zero, one) {
			t.Fatalf("σ = 0: output %x leads", out)
		}
	}
}

func fillRandom(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// TestIsLeaderStatistics: over 20,000 outputs, the fraction of slots led at
// f = 0.1, σ = 0.3 is 1 - 0.9^0.3 ≈ 0.0311 within 4.5 standard deviations
// (±0.0055). The outputs come from a fixed seed, so the test is
// deterministic.
func TestIsLeaderStatistics(t *testing.T) {
	const n = 20_000
	sigma, f := big.NewRat(3, 10), big.NewRat(1, 10)
	rng := rand.New(rand.NewChaCha8([32]byte{2}))
	led := 0
	for range n {
		var out [64]byte
		fillRandom(rng, out[:])
		if IsLeader(out, sigma, f) {
			led++
		}
	}
	p := 1 - math.Pow(0.9, 0.3)
	bound := 4.5 * math.Sqrt(p*(1-p)/n)
	if got := float64(led) / n; math.Abs(got-p) > bound {
		t.Errorf("led %d of %d slots (%.5f), want %.5f ± %.5f", led, n, got, p, bound)
	}
}

// genStake draws a relative stake in (0, 1] with a large denominator, like
// a real stake distribution's.
func genStake(t *rapid.T, label string) *big.Rat {
	den := rapid.Int64Range(1, 1_000_000_000_000).Draw(t, label+" total")
	num := rapid.Int64Range(1, den).Draw(t, label+" stake")
	return big.NewRat(num, den)
}

func genF(t *rapid.T) *big.Rat {
	den := rapid.Int64Range(2, 10_000).Draw(t, "f den")
	return big.NewRat(rapid.Int64Range(1, den-1).Draw(t, "f num"), den)
}

// genLeaderValue draws a leader value uniformly, or, half the time, within a
// small relative distance of the threshold (approximated in float64), where
// mistakes would hide.
func genLeaderValue(t *rapid.T, sigma, f *big.Rat) *big.Int {
	if rapid.Bool().Draw(t, "uniform") {
		b := rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "leader value")
		return new(big.Int).SetBytes(b)
	}
	s, _ := sigma.Float64()
	ff, _ := f.Float64()
	threshold := -math.Expm1(s * math.Log1p(-ff)) // 1 - (1-f)^σ
	exp := rapid.IntRange(-12, -1).Draw(t, "offset exponent")
	offset := rapid.Float64Range(1, 9).Draw(t, "offset") * math.Pow(10, float64(exp))
	if rapid.Bool().Draw(t, "below") {
		offset = -offset
	}
	p := new(big.Float).SetPrec(300).SetFloat64(threshold * (1 + offset))
	p.Mul(p, new(big.Float).SetInt(twoTo256()))
	lv, _ := p.Int(nil)
	if lv.Sign() < 0 {
		lv.SetInt64(0)
	}
	if lv.Cmp(twoTo256()) >= 0 {
		lv.Sub(twoTo256(), big.NewInt(1))
	}
	return lv
}

// TestIsLeaderMonotone: more stake never loses a slot, and a smaller leader
// value never loses a slot.
func TestIsLeaderMonotone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genF(t)
		s1, s2 := genStake(t, "σ1"), genStake(t, "σ2")
		if s1.Cmp(s2) > 0 {
			s1, s2 = s2, s1
		}
		lv := genLeaderValue(t, s1, f)
		if leaderValueWins(leaderValueOf(lv), s1, f) && !leaderValueWins(leaderValueOf(lv), s2, f) {
			t.Fatalf("leads with σ = %s but not with σ = %s (f = %s, value %x)", s1, s2, f, lv)
		}
		other := genLeaderValue(t, s1, f)
		lo, hi := lv, other
		if lo.Cmp(hi) > 0 {
			lo, hi = hi, lo
		}
		if leaderValueWins(leaderValueOf(hi), s1, f) && !leaderValueWins(leaderValueOf(lo), s1, f) {
			t.Fatalf("value %x leads but smaller %x does not (σ = %s, f = %s)", hi, lo, s1, f)
		}
	})
}

// TestIsLeaderMatchesExactRational checks the fixed-point verdict against an
// exact one, for σ = a/b with small b: p < 1 - (1-f)^(a/b) ⟺
// (1-p)^b > (1-f)^a, compared as integers. Cases within 10^-25 of the
// threshold (relative) are skipped: there the fixed point decides.
func TestIsLeaderMatchesExactRational(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.Int64Range(1, 12).Draw(t, "σ den")
		a := rapid.Int64Range(1, b).Draw(t, "σ num")
		sigma := big.NewRat(a, b)
		f := genF(t)
		lv := genLeaderValue(t, sigma, f)

		// (2^256 - lv)^b · den(f)^a  vs  (den(f) - num(f))^a · 2^(256·b)
		left := new(big.Int).Exp(new(big.Int).Sub(twoTo256(), lv), big.NewInt(b), nil)
		left.Mul(left, new(big.Int).Exp(f.Denom(), big.NewInt(a), nil))
		right := new(big.Int).Exp(new(big.Int).Sub(f.Denom(), f.Num()), big.NewInt(a), nil)
		right.Lsh(right, uint(256*b))
		gap, _ := new(big.Rat).SetFrac(new(big.Int).Sub(left, right), right).Float64()
		if math.Abs(gap) < 1e-25 {
			t.Skip("within 1e-25 of the threshold")
		}
		want := left.Cmp(right) > 0
		if got := leaderValueWins(leaderValueOf(lv), sigma, f); got != want {
			t.Fatalf("σ = %s, f = %s, value %x: leader = %v, exact %v (gap %g)", sigma, f, lv, got, want, gap)
		}
	})
}

// TestIsLeaderMatchesBigFloat checks the verdict for stakes with large
// denominators against a 400-bit big.Float evaluation of 1 - (1-f)^σ by
// different means (Halley's iteration for ln, squaring for exp).
func TestIsLeaderMatchesBigFloat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sigma, f := genStake(t, "σ"), genF(t)
		lv := genLeaderValue(t, sigma, f)

		const prec = 400
		y := new(big.Float).SetPrec(prec).SetRat(new(big.Rat).Sub(big.NewRat(1, 1), f))
		pow := floatExp(new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetRat(sigma), floatLn(y)))
		threshold := new(big.Float).SetPrec(prec).Sub(big.NewFloat(1).SetPrec(prec), pow)
		p := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt(lv), new(big.Float).SetPrec(prec).SetInt(twoTo256()))
		gap := new(big.Float).SetPrec(prec).Sub(threshold, p)
		rel, _ := new(big.Float).Quo(gap, threshold).Float64()
		if math.Abs(rel) < 1e-25 {
			t.Skip("within 1e-25 of the threshold")
		}
		want := gap.Sign() > 0
		if got := leaderValueWins(leaderValueOf(lv), sigma, f); got != want {
			t.Fatalf("σ = %s, f = %s, value %x: leader = %v, reference %v (relative gap %g)", sigma, f, lv, got, want, rel)
		}
	})
}

// floatExp is e^x for |x| ≲ 20 at x's precision: e^x = (e^(x/2^k))^(2^k)
// with the Taylor series for the reduced argument.
func floatExp(x *big.Float) *big.Float {
	prec := x.Prec()
	const k = 20
	r := new(big.Float).SetPrec(prec).SetMantExp(x, -k)
	sum := big.NewFloat(1).SetPrec(prec)
	term := big.NewFloat(1).SetPrec(prec)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -int(prec))
	for n := int64(1); ; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
		if new(big.Float).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for range k {
		sum.Mul(sum, sum)
	}
	return sum
}

// floatLn is ln(y) for y > 0 by Halley's iteration
// l ← l + 2·(y - e^l)/(y + e^l), from the float64 estimate.
func floatLn(y *big.Float) *big.Float {
	prec := y.Prec()
	yf, _ := y.Float64()
	l := new(big.Float).SetPrec(prec).SetFloat64(math.Log(yf))
	for range 8 {
		e := floatExp(l)
		num := new(big.Float).SetPrec(prec).Sub(y, e)
		den := new(big.Float).SetPrec(prec).Add(y, e)
		step := new(big.Float).SetPrec(prec).Quo(num, den)
		l.Add(l, step.Add(step, step))
	}
	return l
}

func BenchmarkIsLeader(b *testing.B) {
	var out [64]byte
	sigma, f := big.NewRat(123456789, 987654321), big.NewRat(1, 20)
	for i := 0; b.Loop(); i++ {
		out[0] = byte(i)
		IsLeader(out, sigma, f)
	}
}
