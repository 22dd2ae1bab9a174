// Package consensustest builds the fixtures the tests of consensus's users
// share: stake pools with their keys, a genesis of them, and headers a pool
// forges with a real VRF proof and signature.
//
// Invariants: what it builds passes consensus.Validator — it never fakes a
// check — and the same seed gives the same keys. It holds no state.
package consensustest

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/vrf"
)

// TB is the part of testing.TB (and rapid.T) the builders need.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Pool is a stake pool's keys: the issuer's, the VRF's and the voting one.
type Pool struct {
	Name   string
	Issuer ed25519.PrivateKey
	VRF    *vrf.SecretKey
	Voting *bls.SecretKey
}

// NewPool derives a pool's keys from seed: distinct seeds, distinct keys.
// The key derivations fail only on a seed of the wrong length, which this
// never passes, so a failure is a bug here: it panics.
func NewPool(name string, seed byte) Pool {
	key := func(kind byte) []byte { return append(bytes.Repeat([]byte{seed}, 31), kind) }
	vrfKey, err := vrf.NewKeyFromSeed(key(2))
	if err != nil {
		panic(err)
	}
	voting, err := bls.KeyFromSeed(key(3))
	if err != nil {
		panic(err)
	}
	return Pool{Name: name, Issuer: ed25519.NewKeyFromSeed(key(1)), VRF: vrfKey, Voting: voting}
}

// IssuerVKey is the pool's issuer verification key, as headers carry it.
func (p Pool) IssuerVKey() block.Bytes32 {
	return block.Bytes32(p.Issuer.Public().(ed25519.PublicKey))
}

// Entry is the pool's genesis entry with stake, its voting key proven.
func (p Pool) Entry(stake uint64) consensus.Pool {
	vrfPub := p.VRF.Public()
	e := consensus.Pool{
		Name:       p.Name,
		IssuerVKey: hex.EncodeToString(p.Issuer.Public().(ed25519.PublicKey)),
		VRFVKey:    hex.EncodeToString(vrfPub[:]),
		Stake:      stake,
	}
	e.SetVotingKey(p.Voting.PublicKey(), p.Voting.ProvePossession())
	return e
}

// Genesis is a network of pools, one unit of stake each: one-second slots
// from an hour ago, every pool leading every slot (f = 1), k = 10, and the
// default Leios parameters. Tests adjust what they need before building
// the validator.
func Genesis(pools ...Pool) *consensus.Genesis {
	g := &consensus.Genesis{
		SystemStart:      time.Now().Add(-time.Hour),
		SlotLengthMs:     1000,
		ActiveSlotsCoeff: "1",
		SecurityParam:    10,
		EpochNonce:       hex.EncodeToString(bytes.Repeat([]byte{4}, 32)),
		MaxClockSkewMs:   1000,
		ProtocolParams:   ledger.DefaultParams(),
		Leios:            consensus.DefaultLeiosParams(),
	}
	for _, p := range pools {
		g.Pools = append(g.Pools, p.Entry(1))
	}
	return g
}

// Validator is g's validator.
func Validator(tb TB, g *consensus.Genesis) *consensus.Validator {
	tb.Helper()
	v, err := consensus.NewValidator(g, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// Header is hb forged by p: its issuer and VRF keys, a VRF proof for its
// slot under v's nonce, in v's network's encoding, signed.
func (p Pool) Header(v *consensus.Validator, hb block.HeaderBody) *block.Header {
	hb.Encoding = v.Leios().Encoding
	proof, output := vrf.Prove(p.VRF, v.VRFInput(hb.Slot))
	hb.VRF = block.VRFResult{Output: output, Proof: proof}
	hb.IssuerVKey = p.IssuerVKey()
	hb.VRFVKey = block.Bytes32(p.VRF.Public())
	return block.NewHeader(hb, p.Issuer)
}
