package consensus

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
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

// Committee is the voting committee of a network, computed from its
// genesis: every node computes the same one. It is immutable and safe for
// concurrent use.
//
// Seats are numbered from 0 in genesis order. When the genesis has no more
// pools with stake than leios.committeeSeats, each of them holds one seat.
// When it has more, the seats go to the persistent pools of Fait Accompli
// (see faitAccompli): the largest stakes, ties to the earlier pool. The
// seats Fait Accompli would fill per election by local sortition are not
// built, so the stake of the other pools does not vote, and the committee
// may hold fewer seats than leios.committeeSeats. With exactly as many pools
// as seats every pool holds one too, where Fait Accompli would leave the
// smallest to sortition for its one expected seat.
//
// A certificate needs votes of at least QuorumStake: leios.quorum of the
// committee's stake, rounded up.
type Committee struct {
	seats       []Seat
	byIssuer    map[block.Bytes32]uint16
	stake       uint64
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
)

// NewCommittee checks g and computes its committee.
func NewCommittee(g *Genesis) (*Committee, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	holders, _ := g.seatHolders()
	c := &Committee{seats: make([]Seat, len(holders)), byIssuer: make(map[block.Bytes32]uint16, len(holders))}
	for seat, i := range holders {
		p := &g.Pools[i]
		issuer, _ := decodeKey(p.IssuerVKey)
		key, _ := p.votingKey()
		c.seats[seat] = Seat{Pool: p.Name, Issuer: issuer, VotingKey: key, Stake: p.Stake}
		c.byIssuer[issuer] = uint16(seat)
		c.stake += p.Stake // Check bounds the total stake to 64 bits
	}
	// ⌈quorum · stake⌉, exactly.
	q, _ := g.Leios.QuorumFraction()
	need := new(big.Int).Mul(q.Num(), new(big.Int).SetUint64(c.stake))
	need.Add(need, new(big.Int).Sub(q.Denom(), big.NewInt(1)))
	need.Quo(need, q.Denom())
	c.quorumStake = need.Uint64() // in [1, stake]: 0 < quorum ≤ 1 and stake > 0
	return c, nil
}

// seatHolders returns the genesis indices of the pools holding a seat,
// ascending: seat k is held by pool seatHolders()[k]. It refuses a
// committee without seats, which could never certify.
func (g *Genesis) seatHolders() ([]int, error) {
	var staked []int // pools with stake; a seat of no weight serves nothing
	stakes := make([]uint64, 0, len(g.Pools))
	for i, p := range g.Pools {
		if p.Stake > 0 {
			staked = append(staked, i)
			stakes = append(stakes, p.Stake)
		}
	}
	if len(staked) <= g.Leios.CommitteeSeats {
		return staked, nil
	}
	persistent := faitAccompli(stakes, g.Leios.CommitteeSeats)
	if len(persistent) == 0 {
		return nil, fmt.Errorf("leios.committeeSeats %d: Fait Accompli gives %d pools no persistent seat (stake too even); raise it to the number of pools",
			g.Leios.CommitteeSeats, len(staked))
	}
	holders := make([]int, len(persistent))
	for k, j := range persistent {
		holders[k] = staked[j]
	}
	return holders, nil
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

// QuorumStake is the least stake whose votes certify an EB.
func (c *Committee) QuorumStake() uint64 { return c.quorumStake }

// SignersSize is the length in bytes of a certificate's signers bitfield:
// one bit per seat, rounded up to whole bytes.
func (c *Committee) SignersSize() int { return (len(c.seats) + 7) / 8 }
