package consensus

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
)

func mustCommittee(t testing.TB, g *Genesis) *Committee {
	t.Helper()
	c, err := NewCommittee(g)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// subject is a vote subject of its own for each b: an RB hash, the RB's
// slot and the EB hash all differ from every other b's.
func subject(b byte) block.VoteSubject {
	var rb, eb block.Hash
	for i := range rb {
		rb[i], eb[i] = b+byte(i), 0xe0^b+byte(i)
	}
	return block.VoteSubject{RbHash: rb, Slot: 100 + uint64(b), EbHash: eb}
}

// seated is g's committee and the BLS keys of its seats, seat k's at k;
// keys are the genesis pools', in genesis order.
func seated(t testing.TB, g *Genesis, keys []*bls.SecretKey) (*Committee, []*bls.SecretKey) {
	t.Helper()
	c := mustCommittee(t, g)
	bySeat := make([]*bls.SecretKey, c.Size())
	for i, p := range g.Pools {
		issuer, _ := decodeKey(p.IssuerVKey)
		if seat, ok := c.SeatOf(issuer); ok {
			bySeat[seat] = keys[i]
		}
	}
	return c, bySeat
}

// votes returns the votes of these seats on s, signed with keys (indexed
// by seat, as seated returns them) on c's vote message.
func votes(c *Committee, keys []*bls.SecretKey, s block.VoteSubject, seats ...int) []block.Vote {
	vs := make([]block.Vote, len(seats))
	for i, seat := range seats {
		vs[i] = block.Vote{RbHash: s.RbHash, VoterSeat: uint16(seat), Signature: keys[seat].Sign(c.VoteMessage(s)).Bytes()}
	}
	return vs
}

// subjects is n times s: the subjects of n votes on s.
func subjects(s block.VoteSubject, n int) []block.VoteSubject {
	out := make([]block.VoteSubject, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// bothEncodings runs f on a network of each encoding.
func bothEncodings(t *testing.T, f func(t *testing.T, enc block.Encoding)) {
	for _, enc := range []block.Encoding{block.EncodingCIP, block.EncodingPrototype} {
		t.Run(enc.String(), func(t *testing.T) { f(t, enc) })
	}
}

func TestCommitteeSeats(t *testing.T) {
	// σ_c 0.99 of 21 takes every pool with stake, seated by stake: pools
	// 3, 2, 0. The pool without stake holds no seat.
	g, _ := testGenesis(t, "0.99", "0.75", 5, 0, 7, 9)
	c := mustCommittee(t, g)
	if c.Size() != 3 || c.Stake() != 21 || c.ActiveStake() != 21 || c.QuorumStake() != 16 || c.SignersSize() != 1 {
		t.Errorf("size %d, stake %d of %d, quorum %d, signers %d bytes; want 3, 21 of 21, 16 (⌈15.75⌉), 1",
			c.Size(), c.Stake(), c.ActiveStake(), c.QuorumStake(), c.SignersSize())
	}
	for seat, pool := range []int{3, 2, 0} {
		s, ok := c.Seat(uint16(seat))
		issuer, _ := decodeKey(g.Pools[pool].IssuerVKey)
		if !ok || s.Pool != g.Pools[pool].Name || s.Stake != g.Pools[pool].Stake || s.Issuer != issuer {
			t.Errorf("seat %d = %+v, want pool %d", seat, s, pool)
		}
		if got, ok := c.SeatOf(issuer); !ok || got != uint16(seat) {
			t.Errorf("SeatOf(pool %d) = %d, %v", pool, got, ok)
		}
		if pk, _ := g.Pools[pool].votingKey(); !s.VotingKey.Equal(pk) {
			t.Errorf("seat %d holds another key", seat)
		}
	}
	issuer1, _ := decodeKey(g.Pools[1].IssuerVKey)
	if _, ok := c.SeatOf(issuer1); ok {
		t.Error("the pool without stake holds a seat")
	}
	if _, ok := c.Seat(3); ok {
		t.Error("seat 3 of 3 exists")
	}

	// σ_c 0.9 of 100 is reached exactly by the two largest, which are the
	// committee; the quorum is 3/4 of all 100, not of their 90.
	g, _ = testGenesis(t, "0.9", "0.75", 60, 30, 9, 1)
	c = mustCommittee(t, g)
	if c.Size() != 2 || c.Stake() != 90 || c.ActiveStake() != 100 || c.QuorumStake() != 75 {
		t.Errorf("size %d, stake %d of %d, quorum %d; want 2, 90 of 100, 75", c.Size(), c.Stake(), c.ActiveStake(), c.QuorumStake())
	}
}

// TestQuorumCountsActiveStake: a certificate needs signers holding
// ⌈τ × total active stake⌉, the stake of the pools truncation leaves out
// included. Of 200 pools holding 1,000,000, five form the committee (σ_c
// 0.99, 990,000, is reached at the fifth); the other 195 hold 9,900. With τ
// 0.75 the quorum is 750,000: the seats A, B and E (749,999) are refused
// though they hold over 3/4 of the committee's 990,100, and A, B and D
// (750,001) certify. Certificates are built and checked with real keys
// through the BLS aggregate.
func TestQuorumCountsActiveStake(t *testing.T) {
	committee := []uint64{400_000, 300_000, 190_100, 50_001, 49_999} // seats A to E
	var stakes []uint64
	for i := range 195 { // the tail first: seats follow stake, not genesis order
		stake := uint64(50)
		if i < 150 {
			stake = 51
		}
		stakes = append(stakes, stake)
	}
	for i := len(committee) - 1; i >= 0; i-- {
		stakes = append(stakes, committee[i])
	}
	const a, b, c, d, e = 0, 1, 2, 3, 4
	g, poolKeys := testGenesis(t, "0.99", "0.75", stakes...)
	rb := subject(1)
	for _, tc := range []struct {
		tau     string
		quorum  uint64
		signers []int
		ok      bool
	}{
		{"0.75", 750_000, []int{a, b, e}, false},      // 1 under
		{"0.75", 750_000, []int{a, b, d}, true},       // 1 over
		{"0.75", 750_000, []int{a, b, c, d, e}, true}, // the whole committee
		{"0.749999", 749_999, []int{a, b, e}, true},   // exactly at
		{"0.7499995", 750_000, []int{a, b, e}, false}, // 749,999.5 rounds up
		{"0.5", 500_000, []int{c, d, e}, false},       // 290,100
		{"0.5", 500_000, []int{a, c}, true},           // 590,100
	} {
		name := fmt.Sprintf("τ %s, seats %v", tc.tau, tc.signers)
		g.Leios.QuorumStakeFraction = json.Number(tc.tau)
		cm, keys := seated(t, g, poolKeys)
		if cm.Size() != len(committee) || cm.Stake() != 990_100 || cm.ActiveStake() != 1_000_000 || cm.QuorumStake() != tc.quorum {
			t.Fatalf("%s: %d seats, stake %d of %d, quorum %d; want 5, 990,100 of 1,000,000, %d",
				name, cm.Size(), cm.Stake(), cm.ActiveStake(), cm.QuorumStake(), tc.quorum)
		}
		for seat, stake := range committee {
			if s, _ := cm.Seat(uint16(seat)); s.Stake != stake {
				t.Fatalf("seat %d holds %d, want %d", seat, s.Stake, stake)
			}
		}
		vs := votes(cm, keys, rb, tc.signers...)
		cert, err := cm.Certify(rb, vs)
		if !tc.ok {
			if !errors.Is(err, ErrNoQuorum) {
				t.Errorf("%s: Certify: %v, want ErrNoQuorum", name, err)
			}
			// The same signers' certificate, aggregated by hand, is refused too.
			sigs := make([]*bls.Signature, len(vs))
			cert = &block.Certificate{Slot: rb.Slot, EbHash: rb.EbHash, Signers: make([]byte, cm.SignersSize()), Encoding: block.EncodingCIP}
			for i, v := range vs {
				sigs[i], _ = bls.SignatureFromBytes(v.Signature[:])
				cert.SetSigner(int(v.VoterSeat))
			}
			agg, err := bls.AggregateSignatures(sigs)
			if err != nil {
				t.Fatal(err)
			}
			cert.AggregateSignature = agg.Bytes()
			if err := cm.VerifyCertificate(rb, cert); !errors.Is(err, ErrNoQuorum) {
				t.Errorf("%s: VerifyCertificate: %v, want ErrNoQuorum", name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Certify: %v", name, err)
		}
		if err := cm.VerifyCertificate(rb, cert); err != nil {
			t.Errorf("%s: VerifyCertificate: %v", name, err)
		}
	}
}

// TestCertificates: for 1…N signers a certificate is built in the
// network's encoding and verifies; it fails with one bit wrong, one
// signature wrong, or for another RB's announcement.
func TestCertificates(t *testing.T) { bothEncodings(t, testCertificates) }

func testCertificates(t *testing.T, enc block.Encoding) {
	const n = 11 // two bitfield bytes, five bits of padding
	stakes := make([]uint64, n)
	for i := range stakes {
		stakes[i] = 1
	}
	g, keys := testGenesis(t, "1", "0.01", stakes...) // any one signer is a quorum
	g.Leios.Encoding = enc
	c, keys := seated(t, g, keys)
	rb := subject(7)
	for k := 1; k <= n; k++ {
		var seats []int
		for s := 0; s < n && len(seats) < k; s += 1 + (n-k)/k { // spread the signers out
			seats = append(seats, s)
		}
		cert, err := c.Certify(rb, votes(c, keys, rb, seats...))
		if err != nil {
			t.Fatalf("%d signers: %v", len(seats), err)
		}
		if len(cert.Signers) != 2 {
			t.Fatalf("bitfield of %d bytes", len(cert.Signers))
		}
		if cert.Encoding != enc || (enc == block.EncodingCIP) != (cert.Slot == rb.Slot && cert.EbHash == rb.EbHash) {
			t.Fatalf("a %s certificate names slot %d EB %s", cert.Encoding, cert.Slot, cert.EbHash.Short())
		}
		for s := range n {
			if cert.HasSigner(s) != slices.Contains(seats, s) {
				t.Fatalf("%d signers %v: bit %d is %v", len(seats), seats, s, cert.HasSigner(s))
			}
		}
		if err := c.VerifyCertificate(rb, cert); err != nil {
			t.Fatalf("%d signers: %v", len(seats), err)
		}
		// Another announcement: the CIP's certificate names its EB, the
		// prototype's signature is over its RB.
		wantOther := ErrBadCertificate
		if enc == block.EncodingCIP {
			wantOther = ErrOtherEB
		}
		if err := c.VerifyCertificate(subject(8), cert); !errors.Is(err, wantOther) {
			t.Errorf("%d signers, another RB: %v, want %v", len(seats), err, wantOther)
		}
		// One bit flipped: a signer dropped, or a non-signer added.
		for _, s := range []int{seats[0], (seats[len(seats)-1] + 1) % n} {
			flipped := *cert
			flipped.Signers = append([]byte{}, cert.Signers...)
			flipped.Signers[s/8] ^= 0x80 >> (s % 8)
			err := c.VerifyCertificate(rb, &flipped)
			if want := ErrBadCertificate; !errors.Is(err, want) && !(len(seats) == 1 && errors.Is(err, ErrNoQuorum)) {
				t.Errorf("%d signers, bit %d flipped: %v", len(seats), s, err)
			}
		}
		// One signature wrong: a vote for another RB among them.
		vs := votes(c, keys, rb, seats...)
		vs[len(vs)-1].Signature = keys[seats[len(seats)-1]].Sign(c.VoteMessage(subject(9))).Bytes()
		bad, err := c.Certify(rb, vs)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.VerifyCertificate(rb, bad); !errors.Is(err, ErrBadCertificate) {
			t.Errorf("%d signers, one signature wrong: %v", len(seats), err)
		}
	}
}

func TestVerifyCertificateMalformed(t *testing.T) {
	g, keys := testGenesis(t, "1", "0.5", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	c, keys := seated(t, g, keys)
	rb := subject(3)
	cert, err := c.Certify(rb, votes(c, keys, rb, 0, 1, 2, 3, 4, 5, 10))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		signers []byte
		sig     func(*block.Bytes48)
		want    error
	}{
		{"bitfield a byte short", cert.Signers[:1], nil, ErrMalformedSigners},
		{"bitfield a byte long", append(append([]byte{}, cert.Signers...), 0), nil, ErrMalformedSigners},
		{"padding bit set", []byte{cert.Signers[0], cert.Signers[1] | 0x01}, nil, ErrMalformedSigners},
		{"first padding bit set", []byte{cert.Signers[0], cert.Signers[1] | 0x10}, nil, ErrMalformedSigners},
		{"no signers", []byte{0, 0}, nil, ErrNoQuorum},
		{"signature not a point", cert.Signers, func(s *block.Bytes48) { s[0] ^= 0x40 }, ErrBadCertificate},
		{"signature zero", cert.Signers, func(s *block.Bytes48) { *s = block.Bytes48{} }, ErrBadCertificate},
	} {
		bad := *cert
		bad.Signers = tc.signers
		if tc.sig != nil {
			tc.sig(&bad.AggregateSignature)
		}
		if err := c.VerifyCertificate(rb, &bad); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// The CIP's certificate names what it certifies, and a network takes
	// its own encoding's alone.
	for name, spoil := range map[string]func(*block.Certificate){
		"another slot":          func(c *block.Certificate) { c.Slot++ },
		"another EB":            func(c *block.Certificate) { c.EbHash[0] ^= 1 },
		"the prototype's shape": func(c *block.Certificate) { c.Encoding = block.EncodingPrototype },
	} {
		bad := *cert
		spoil(&bad)
		want := ErrOtherEB
		if bad.Encoding != cert.Encoding {
			want = ErrWrongEncoding
		}
		if err := c.VerifyCertificate(rb, &bad); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	if err := c.VerifyCertificate(rb, cert); err != nil {
		t.Errorf("the cases changed the certificate: %v", err)
	}
}

func TestCertifyRefuses(t *testing.T) {
	g, keys := testGenesis(t, "0.99", "0.75", 1, 1, 1, 1)
	c, keys := seated(t, g, keys)
	rb := subject(1)
	if _, err := c.Certify(rb, append(votes(c, keys, rb, 0, 1), votes(c, keys, subject(2), 2)...)); !errors.Is(err, ErrOtherRB) {
		t.Errorf("a vote for another RB: %v", err)
	}
	unknown := votes(c, keys, rb, 0, 1, 2)
	unknown[2].VoterSeat = 4
	if _, err := c.Certify(rb, unknown); !errors.Is(err, ErrUnknownSeat) {
		t.Errorf("a vote of seat 4 of 4: %v", err)
	}
	garbled := votes(c, keys, rb, 0, 1, 2)
	garbled[1].Signature = block.Bytes48{}
	if _, err := c.Certify(rb, garbled); !errors.Is(err, ErrBadVoteSignature) {
		t.Errorf("an undecodable vote signature: %v", err)
	}
	// A seat voting twice counts once: 2 seats of 4 are no quorum of 3.
	if _, err := c.Certify(rb, votes(c, keys, rb, 0, 1, 1, 0)); !errors.Is(err, ErrNoQuorum) {
		t.Errorf("two seats voting twice each: %v", err)
	}
	cert, err := c.Certify(rb, votes(c, keys, rb, 0, 1, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyCertificate(rb, cert); err != nil {
		t.Errorf("a certificate with a repeated vote: %v", err)
	}
	if _, err := c.Certify(rb, nil); !errors.Is(err, ErrNoQuorum) {
		t.Errorf("no votes: %v", err)
	}
}

func TestVerifyVotes(t *testing.T) {
	g, keys := testGenesis(t, "0.99", "0.75", 1, 2, 3, 4, 5)
	c, keys := seated(t, g, keys)
	rb := subject(5)
	good := votes(c, keys, rb, 0, 1, 2, 3, 4, 0)
	for i := range good {
		if err := c.VerifyVote(&good[i], rb); err != nil {
			t.Fatalf("vote %d: %v", i, err)
		}
	}
	if errs := c.VerifyVotes(good, subjects(rb, len(good))); errs != nil {
		t.Fatalf("VerifyVotes of good votes = %v", errs)
	}
	if errs := c.VerifyVotes(nil, nil); errs != nil {
		t.Errorf("VerifyVotes(nil) = %v", errs)
	}

	bad := append([]block.Vote{}, good...)
	bad[1].Signature = votes(c, keys, subject(6), 1)[0].Signature // signed on another announcement
	bad[2].Signature = good[3].Signature                          // another seat's signature
	bad[3].VoterSeat = 5                                          // no such seat
	bad[4].Signature[0] ^= 0x40                                   // not a point
	bad[5].RbHash = subject(6).RbHash                             // filed under another RB
	want := []error{nil, ErrBadVoteSignature, ErrBadVoteSignature, ErrUnknownSeat, ErrBadVoteSignature, ErrOtherRB}
	errs := c.VerifyVotes(bad, subjects(rb, len(bad)))
	if len(errs) != len(bad) {
		t.Fatalf("VerifyVotes returned %d errors for %d votes", len(errs), len(bad))
	}
	for i := range bad {
		if !errors.Is(errs[i], want[i]) || (want[i] == nil) != (errs[i] == nil) {
			t.Errorf("vote %d: %v, want %v", i, errs[i], want[i])
		}
		if err := c.VerifyVote(&bad[i], rb); !errors.Is(err, want[i]) || (want[i] == nil) != (err == nil) {
			t.Errorf("VerifyVote %d: %v, want %v", i, err, want[i])
		}
	}
}

// A batch is accepted or refused whole: one bad vote refuses it, with the
// reason of a vote that failed before any signature was checked (an unknown
// seat, a signature that is not a point), else a bad batch signature.
func TestVerifyVoteBatch(t *testing.T) {
	g, keys := testGenesis(t, "0.99", "0.75", 1, 2, 3, 4, 5)
	c, keys := seated(t, g, keys)
	rb := subject(5)
	good := votes(c, keys, rb, 0, 1, 2, 3, 4)
	if err := c.VerifyVoteBatch(good, subjects(rb, len(good))); err != nil {
		t.Fatalf("a good batch: %v", err)
	}
	tests := []struct {
		name  string
		spoil func(*block.Vote)
		want  error
	}{
		{"signed on another announcement", func(v *block.Vote) { v.Signature = votes(c, keys, subject(6), 1)[0].Signature }, ErrBadVoteSignature},
		{"filed under another RB", func(v *block.Vote) { v.RbHash = subject(6).RbHash }, ErrOtherRB},
		{"another seat's signature", func(v *block.Vote) { v.Signature = good[3].Signature }, ErrBadVoteSignature},
		{"no such seat", func(v *block.Vote) { v.VoterSeat = 5 }, ErrUnknownSeat},
		{"not a point", func(v *block.Vote) { v.Signature[0] ^= 0x40 }, ErrBadVoteSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batch := append([]block.Vote{}, good...)
			tt.spoil(&batch[1])
			if err := c.VerifyVoteBatch(batch, subjects(rb, len(batch))); !errors.Is(err, tt.want) {
				t.Fatalf("VerifyVoteBatch: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestVoter(t *testing.T) {
	// σ_c 0.9 of 38 is reached at 35: seats pool3, pool1, pool4.
	g, keys := testGenesis(t, "0.9", "0.75", 1, 10, 2, 20, 5)
	c := mustCommittee(t, g)
	issuer := func(i int) block.Bytes32 { k, _ := decodeKey(g.Pools[i].IssuerVKey); return k }
	v, err := c.NewVoter(issuer(1), keys[1])
	if err != nil {
		t.Fatal(err)
	}
	if v.Seat() != 1 {
		t.Errorf("pool1 votes in seat %d, want 1", v.Seat())
	}
	vote := v.Vote(subject(4))
	if vote.RbHash != subject(4).RbHash || vote.VoterSeat != 1 {
		t.Errorf("vote %+v", vote)
	}
	if err := c.VerifyVote(&vote, subject(4)); err != nil {
		t.Errorf("the voter's vote: %v", err)
	}
	if _, err := c.NewVoter(issuer(2), keys[2]); !errors.Is(err, ErrNotOnCommittee) {
		t.Errorf("a pool without a seat: %v", err)
	}
	if _, err := c.NewVoter(issuer(1), keys[3]); !errors.Is(err, ErrWrongVotingKey) {
		t.Errorf("another pool's key: %v", err)
	}
}

// BenchmarkForgedVoteBatch is the cost of a batch of 100 votes with one
// forged signature: checked vote by vote to tell which failed
// (VerifyVotes), against refused whole (VerifyVoteBatch, what the relay
// does with a peer's batch).
func BenchmarkForgedVoteBatch(b *testing.B) {
	stakes := make([]uint64, 100)
	seats := make([]int, len(stakes))
	for i := range stakes {
		stakes[i], seats[i] = 1, i
	}
	g, keys := testGenesis(b, "1", "0.75", stakes...)
	c, keys := seated(b, g, keys)
	forged := votes(c, keys, subject(5), seats...)
	forged[len(forged)/2].Signature = votes(c, keys, subject(6), 0)[0].Signature
	on := subjects(subject(5), len(forged))
	b.Run("checked one by one", func(b *testing.B) {
		for b.Loop() {
			if c.VerifyVotes(forged, on) == nil {
				b.Fatal("a forged batch verified")
			}
		}
	})
	b.Run("refused whole", func(b *testing.B) {
		for b.Loop() {
			if c.VerifyVoteBatch(forged, on) == nil {
				b.Fatal("a forged batch verified")
			}
		}
	})
}

// Under the CIP's message a vote names the slot and the EB, not the RB: it
// verifies for any RB that announced that EB at that slot — two RBs of one
// slot announcing one EB share their votes. The prototype's names the RB.
func TestVoteMessageNames(t *testing.T) {
	bothEncodings(t, func(t *testing.T, enc block.Encoding) {
		g, keys := testGenesis(t, "0.99", "0.75", 1, 1, 1)
		g.Leios.Encoding = enc
		c, keys := seated(t, g, keys)
		s := subject(1)
		twin := s
		twin.RbHash = subject(2).RbHash // another RB, the same slot and EB
		vote := votes(c, keys, s, 0)[0]
		vote.RbHash = twin.RbHash
		err := c.VerifyVote(&vote, twin)
		if (err == nil) != (enc == block.EncodingCIP) {
			t.Fatalf("a vote on %s checked on %s: %v", s, twin, err)
		}
		if enc == block.EncodingPrototype && !errors.Is(err, ErrBadVoteSignature) {
			t.Fatalf("err %v, want ErrBadVoteSignature", err)
		}
		for _, other := range []block.VoteSubject{{RbHash: s.RbHash, Slot: s.Slot + 1, EbHash: s.EbHash}, {RbHash: s.RbHash, Slot: s.Slot, EbHash: subject(2).EbHash}} {
			vote := votes(c, keys, s, 0)[0]
			err := c.VerifyVote(&vote, other)
			if (err == nil) != (enc == block.EncodingPrototype) {
				t.Fatalf("a vote on %s checked on %s: %v", s, other, err)
			}
		}
	})
}
