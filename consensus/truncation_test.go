package consensus

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/ledger"
	"pgregory.net/rapid"
)

// wantCommittee is CIP-0164's committee selection written out plainly,
// apart from truncate: sort the pools by stake, largest first (equal
// stakes by pool id), and take them while the share of the active stake
// taken so far is below σ_c. It returns the members' names in seat order.
func wantCommittee(t *testing.T, pools []Pool, sigma string) []string {
	t.Helper()
	type entry struct {
		name  string
		stake int64
		id    []byte
	}
	var total int64
	entries := make([]entry, len(pools))
	for i, p := range pools {
		issuer, err := hex.DecodeString(p.IssuerVKey)
		if err != nil {
			t.Fatal(err)
		}
		id := ledger.KeyHash(issuer)
		entries[i] = entry{p.Name, int64(p.Stake), id[:]}
		total += int64(p.Stake)
	}
	sort.Slice(entries, func(a, b int) bool {
		if entries[a].stake != entries[b].stake {
			return entries[a].stake > entries[b].stake
		}
		return bytes.Compare(entries[a].id, entries[b].id) < 0
	})
	target, ok := new(big.Rat).SetString(sigma)
	if !ok {
		t.Fatalf("σ_c %q", sigma)
	}
	taken := new(big.Rat)
	var names []string
	for _, e := range entries {
		if taken.Cmp(target) >= 0 {
			break
		}
		names = append(names, e.name)
		taken.Add(taken, big.NewRat(e.stake, total))
	}
	return names
}

// TestTruncation: genesis files of 200 pools give the committee the CIP's
// rule gives (wantCommittee), of the size worked out by hand (exact
// fractions) for each. The stakes are listed in an order that is not the
// stake order, so the seats must be sorted, not read off the genesis.
func TestTruncation(t *testing.T) {
	const n = 200
	var pools []Pool
	for i := range n {
		p, _ := testPool(t, i, 0)
		pools = append(pools, p)
	}
	// zipf gives the pool at genesis index i the stake 10⁹ / r, its rank r
	// a permutation of 1…200 (73 is coprime to 200): H(200) ≈ 5.878 of 10⁹
	// in all, the 189 largest are the first to reach 99 % of it, the 111
	// largest 90 %.
	zipf := func(i int) uint64 { return 1_000_000_000 / uint64((i*73)%n+1) }
	for _, tc := range []struct {
		name  string
		sigma string
		stake func(i int) uint64
		size  int
	}{
		{"Zipf, σ_c 0.99", "0.99", zipf, 189},
		{"Zipf, σ_c 0.9", "0.9", zipf, 111},
		{"Zipf, σ_c 1: every pool", "1", zipf, n},
		// 1,000,000 of 1,009,950 is 99.01 %: the whale alone.
		{"one pool holds over 99 %", "0.99", func(i int) uint64 {
			if i == 17 {
				return 1_000_000
			}
			return 50
		}, 1},
		// 0.99 of 200 equal stakes is reached exactly at the 198th: the two
		// largest pool ids are left out.
		{"equal stakes", "0.99", func(int) uint64 { return 1 }, 198},
		// 150 pools of 100 and 50 of 60 hold 18,000; 0.99 of it, 17,820,
		// is reached exactly by the 150 and 47 of the 60s: the boundary
		// falls inside a tie, which pool id breaks.
		{"equal stakes at the boundary", "0.99", func(i int) uint64 {
			if i%4 == 1 {
				return 60
			}
			return 100
		}, 197},
		// Every fourth pool has no stake; the other 150 have the Zipf
		// stakes 10⁹ / r, r in 1…150 (rank order as above). 142 reach 0.99.
		{"zero-stake pools", "0.99", zeroEveryFourth, 142},
		{"zero-stake pools, σ_c 1", "1", zeroEveryFourth, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := testGenesis(t, tc.sigma, "0.5")
			g.Pools = slices.Clone(pools)
			for i := range g.Pools {
				g.Pools[i].Stake = tc.stake(i)
			}
			c, err := NewCommittee(g)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for seat := range c.Size() {
				s, _ := c.Seat(uint16(seat))
				got = append(got, s.Pool)
			}
			want := wantCommittee(t, g.Pools, tc.sigma)
			if len(want) != tc.size {
				t.Fatalf("the reference takes %d pools, the hand count %d", len(want), tc.size)
			}
			if !slices.Equal(got, want) {
				t.Errorf("committee of %d %v,\nwant %d %v", len(got), got, len(want), want)
			}
		})
	}
}

// zeroEveryFourth is the stake of pool i in TestTruncation's case with
// zero-stake pools.
func zeroEveryFourth(i int) uint64 {
	if i%4 == 3 {
		return 0
	}
	rank := (i - i/4) * 73 % 150 // the pools with stake, numbered 0…149, permuted (73 is coprime to 150)
	return 1_000_000_000 / uint64(rank+1)
}

// TestTruncationTooManySeats: a committee larger than 16-bit seat numbers
// can name is refused, naming the parameter.
func TestTruncationTooManySeats(t *testing.T) {
	g := &Genesis{Leios: DefaultLeiosParams()}
	g.Leios.CommitteeStakeFraction = json.Number("1")
	for i := range MaxCommitteeSeats + 1 {
		g.Pools = append(g.Pools, Pool{Name: fmt.Sprint(i), IssuerVKey: fmt.Sprintf("%064x", i), Stake: 1})
	}
	want := fmt.Sprintf("leios.committeeStakeFraction 1 takes %d pools, more than the %d seats", MaxCommitteeSeats+1, MaxCommitteeSeats)
	if _, err := g.committeeMembers(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("committeeMembers: %v, want an error containing %q", err, want)
	}
	g.Pools = g.Pools[:MaxCommitteeSeats]
	if members, err := g.committeeMembers(); err != nil || len(members) != MaxCommitteeSeats {
		t.Errorf("%d pools: %d members, %v", MaxCommitteeSeats, len(members), err)
	}
}

// TestTruncateProperties: for any stakes (ties and zeros frequent) and
// σ_c, truncate's committee is what defines the rule: the members come
// first in the order of stake descending, pool id ascending, in that order;
// their stake reaches σ_c of the total, and without the last it does not;
// none is without stake.
func TestTruncateProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 80).Draw(t, "pools")
		stakes, ids := make([]uint64, n), make([][28]byte, n)
		total := new(big.Int)
		for i := range n {
			stakes[i] = rapid.Uint64Range(0, 4).Draw(t, "mantissa") << rapid.UintRange(0, 60).Draw(t, "exponent")
			ids[i] = ledger.KeyHash([]byte{byte(i), byte(i >> 8)})
			total.Add(total, new(big.Int).SetUint64(stakes[i]))
		}
		if total.Sign() == 0 {
			stakes[0], total = 1, big.NewInt(1)
		}
		sigma := big.NewRat(rapid.Int64Range(1, 1000).Draw(t, "σ_c ‰"), 1000)
		members := truncate(stakes, ids, sigma)

		before := func(a, b int) bool { // a comes before b in the order
			return stakes[a] > stakes[b] || stakes[a] == stakes[b] && bytes.Compare(ids[a][:], ids[b][:]) < 0
		}
		in := make([]bool, n)
		for k, m := range members {
			in[m] = true
			if k > 0 && !before(members[k-1], m) {
				t.Fatalf("seat %d (pool %d) is not after seat %d (pool %d)", k, m, k-1, members[k-1])
			}
			if stakes[m] == 0 {
				t.Fatalf("pool %d has no stake and a seat", m)
			}
		}
		for i := range n {
			if !in[i] && before(i, members[len(members)-1]) {
				t.Fatalf("pool %d comes before the last member %d but is left out", i, members[len(members)-1])
			}
		}
		share := func(ms []int) *big.Rat {
			sum := new(big.Int)
			for _, m := range ms {
				sum.Add(sum, new(big.Int).SetUint64(stakes[m]))
			}
			return new(big.Rat).SetFrac(sum, total)
		}
		if share(members).Cmp(sigma) < 0 {
			t.Fatalf("the committee holds %s of the stake, below σ_c %s", share(members), sigma)
		}
		if s := share(members[:len(members)-1]); s.Cmp(sigma) >= 0 {
			t.Fatalf("without its last member the committee still holds %s ≥ σ_c %s", s, sigma)
		}
	})
}
