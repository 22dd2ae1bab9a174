package consensus

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/ledger"
)

// Seat is one seat of the voting committee.
type Seat struct {
	// Pool is the name of the pool holding the seat.
	Pool string
	// Issuer is the pool's issuer (cold) key, which names it in headers.
	Issuer block.Bytes32
	// VotingKey is the pool's BLS key, its proof of possession verified.
	VotingKey *bls.PublicKey
	// Stake is the seat's vote weight: the pool's stake.
	Stake uint64
}

// Committee is the voting committee of a network, chosen from its genesis
// by CIP-0164's stake-based truncation: every node computes the same one.
// It is immutable and safe for concurrent use.
//
// The members are the largest pools, in descending stake, until their stake
// reaches leios.committeeStakeFraction (σ_c) of the total active stake (see
// truncate for the rule and the choices the CIP leaves open). There is no
// sortition and there are no non-persistent voters. Seat k is the k-th
// member in that order (the CIP's voter_id), and a seat's vote weighs its
// pool's stake.
//
// A certificate needs votes of at least QuorumStake: leios.quorumStakeFraction
// (τ) of the total active stake, rounded up — of all pools' stake, so the
// stake truncation leaves out counts against the quorum. As τ < σ_c, the
// whole committee always reaches it.
//
// Votes and certificates sign the network's vote message for what they
// are cast on (Encoding.VoteMessage of a block.VoteSubject): the CIP's
// slot and EB hash, or the prototype's RB hash.
type Committee struct {
	encoding    block.Encoding
	seats       []Seat
	byIssuer    map[block.Bytes32]uint16
	stake       uint64
	activeStake uint64
	quorumStake uint64
}

// Committee errors. Each is wrapped with the offending values.
var (
	ErrUnknownSeat      = errors.New("consensus: no such committee seat")
	ErrBadVoteSignature = errors.New("consensus: vote signature does not verify")
	ErrOtherRB          = errors.New("consensus: vote is for another RB")
	ErrMalformedSigners = errors.New("consensus: certificate signers bitfield is malformed")
	ErrNoQuorum         = errors.New("consensus: signers' stake is below the quorum")
	ErrBadCertificate   = errors.New("consensus: certificate signature does not verify")
	ErrNotOnCommittee   = errors.New("consensus: pool holds no committee seat")
	ErrWrongVotingKey   = errors.New("consensus: voting key is not the seat's")
	// ErrOtherEB: a CIP certificate names another slot or EB than the one
	// its CertRB's parent announced.
	ErrOtherEB = errors.New("consensus: certificate names another EB")
	// ErrWrongEncoding: a header, certificate or EB body is not in the
	// network's encoding (leios.encoding).
	ErrWrongEncoding = errors.New("consensus: not in the network's encoding")
)

// NewCommittee checks g and computes its committee.
func NewCommittee(g *Genesis) (*Committee, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	members, _ := g.committeeMembers()
	c := &Committee{encoding: g.Leios.Encoding, seats: make([]Seat, len(members)), byIssuer: make(map[block.Bytes32]uint16, len(members))}
	for seat, i := range members {
		p := &g.Pools[i]
		issuer, _ := decodeKey(p.IssuerVKey)
		key, _ := p.votingKey()
		c.seats[seat] = Seat{Pool: p.Name, Issuer: issuer, VotingKey: key, Stake: p.Stake}
		c.byIssuer[issuer] = uint16(seat)
		c.stake += p.Stake
	}
	for _, p := range g.Pools {
		c.activeStake += p.Stake // Check bounds the total stake to 64 bits
	}
	// ⌈τ · active stake⌉, exactly.
	_, tau, _ := g.Leios.committeeFractions()
	need := new(big.Int).Mul(tau.Num(), new(big.Int).SetUint64(c.activeStake))
	need.Add(need, new(big.Int).Sub(tau.Denom(), big.NewInt(1)))
	need.Quo(need, tau.Denom())
	c.quorumStake = need.Uint64() // in [1, stake]: 0 < τ < σ_c, active stake > 0
	return c, nil
}

// committeeMembers returns the genesis indices of the committee's pools in
// seat order (see truncate). It refuses a committee larger than 16-bit seat
// numbers can name.
func (g *Genesis) committeeMembers() ([]int, error) {
	sigma, _, err := g.Leios.committeeFractions()
	if err != nil {
		return nil, err
	}
	stakes, ids := make([]uint64, len(g.Pools)), make([][28]byte, len(g.Pools))
	for i, p := range g.Pools {
		issuer, err := decodeKey(p.IssuerVKey)
		if err != nil {
			return nil, fmt.Errorf("pool %d (%s) issuerVKey: %w", i, p.Name, err)
		}
		stakes[i], ids[i] = p.Stake, ledger.KeyHash(issuer[:])
	}
	members := truncate(stakes, ids, sigma)
	if len(members) > MaxCommitteeSeats {
		return nil, fmt.Errorf("leios.committeeStakeFraction %s takes %d pools, more than the %d seats 16-bit seat numbers name; lower it",
			g.Leios.CommitteeStakeFraction, len(members), MaxCommitteeSeats)
	}
	return members, nil
}

// Size is the number of seats.
func (c *Committee) Size() int { return len(c.seats) }

// Seat returns seat number seat.
func (c *Committee) Seat(seat uint16) (Seat, bool) {
	if int(seat) >= len(c.seats) {
		return Seat{}, false
	}
	return c.seats[seat], true
}

// SeatOf returns the seat of the pool with this issuer key.
func (c *Committee) SeatOf(issuer block.Bytes32) (uint16, bool) {
	seat, ok := c.byIssuer[issuer]
	return seat, ok
}

// Stake is the committee's stake: the sum of its seats'.
func (c *Committee) Stake() uint64 { return c.stake }

// ActiveStake is the total active stake: every pool's, on the committee or
// not. The quorum is a share of it.
func (c *Committee) ActiveStake() uint64 { return c.activeStake }

// QuorumStake is the least stake whose votes certify an EB.
func (c *Committee) QuorumStake() uint64 { return c.quorumStake }

// SignersSize is the length in bytes of a certificate's signers bitfield:
// one bit per seat, rounded up to whole bytes.
func (c *Committee) SignersSize() int { return (len(c.seats) + 7) / 8 }

// Encoding is the network's encoding, which chooses the vote message.
func (c *Committee) Encoding() block.Encoding { return c.encoding }

// VoteMessage is what a vote on s signs on this network.
func (c *Committee) VoteMessage(s block.VoteSubject) []byte { return c.encoding.VoteMessage(s) }
