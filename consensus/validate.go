package consensus

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/vrf"
)

// Header rejection reasons. Each is wrapped with the offending values.
var (
	ErrUnknownIssuer = errors.New("consensus: issuer is not a registered pool")
	ErrWrongVRFKey   = errors.New("consensus: VRF key is not the pool's")
	ErrBadVRFProof   = errors.New("consensus: VRF proof does not verify")
	ErrNotLeader     = errors.New("consensus: issuer is not leader in this slot")
	ErrFutureSlot    = errors.New("consensus: header slot is in the future")
	ErrBodyTooLarge  = errors.New("consensus: block body exceeds the RB body limit")
	// ErrCertFlag: the header's leios_certified flag and the body's
	// certificate disagree.
	ErrCertFlag = errors.New("consensus: leios_certified disagrees with the body's certificate")
)

// PoolInfo is what the validator knows of a pool.
type PoolInfo struct {
	Name    string
	VRFVKey vrf.PublicKey
	Sigma   *big.Rat // relative stake
}

// Validator checks ranking-block headers and blocks against a genesis.
// It is immutable after NewValidator and safe for concurrent use.
type Validator struct {
	clock          Clock
	f              *big.Rat
	nonce          [32]byte
	pools          map[block.Bytes32]PoolInfo
	maxSkew        time.Duration
	rbMaxBodyBytes int
	leios          LeiosParams
	committee      *Committee
	now            func() time.Time
}

// NewValidator builds a validator; now is the wall clock (nil = time.Now).
func NewValidator(g *Genesis, now func() time.Time) (*Validator, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	committee, err := NewCommittee(g)
	if err != nil {
		return nil, err
	}
	f, _ := g.ActiveSlots()
	nonce, _ := g.Nonce()
	var total uint64
	for _, p := range g.Pools {
		total += p.Stake
	}
	pools := make(map[block.Bytes32]PoolInfo, len(g.Pools))
	for _, p := range g.Pools {
		issuer, _ := decodeKey(p.IssuerVKey)
		vrfKey, _ := decodeKey(p.VRFVKey)
		pools[issuer] = PoolInfo{
			Name:    p.Name,
			VRFVKey: vrf.PublicKey(vrfKey),
			Sigma:   new(big.Rat).SetFrac(new(big.Int).SetUint64(p.Stake), new(big.Int).SetUint64(total)),
		}
	}
	return &Validator{
		clock:          g.Clock(),
		f:              f,
		nonce:          nonce,
		pools:          pools,
		maxSkew:        time.Duration(g.MaxClockSkewMs) * time.Millisecond,
		rbMaxBodyBytes: g.Leios.RBMaxBodyBytes,
		leios:          g.Leios,
		committee:      committee,
		now:            now,
	}, nil
}

// Clock is the network's slot clock.
func (v *Validator) Clock() Clock { return v.clock }

// MaxClockSkew is how far into the future a header's slot may start.
func (v *Validator) MaxClockSkew() time.Duration { return v.maxSkew }

// Committee is the voting committee of the genesis.
func (v *Validator) Committee() *Committee { return v.committee }

// Leios are the genesis's Leios parameters.
func (v *Validator) Leios() LeiosParams { return v.leios }

// Pool returns the registered pool with this issuer key.
func (v *Validator) Pool(issuer block.Bytes32) (PoolInfo, bool) {
	p, ok := v.pools[issuer]
	return p, ok
}

// VRFInput is the VRF input (alpha) for a slot on this network.
func (v *Validator) VRFInput(slot uint64) []byte { return VRFInput(slot, v.nonce) }

// IsLeader reports whether a pool with this issuer key and this VRF output
// for the slot leads it.
func (v *Validator) IsLeader(issuer block.Bytes32, vrfOutput [64]byte) bool {
	p, ok := v.pools[issuer]
	return ok && IsLeader(vrfOutput, p.Sigma, v.f)
}

// ValidateHeader checks, in order of cost: the header is in the network's
// encoding, the issuer is a pool, the VRF key is that pool's, the slot has
// begun (within the allowed skew), the VRF proof verifies for the slot and
// gives the claimed output, that output makes the pool leader, and the
// issuer's signature.
func (v *Validator) ValidateHeader(h *block.Header) error {
	if h.Encoding != v.leios.Encoding {
		return fmt.Errorf("%w: a %s header on a %s network, block %d slot %d", ErrWrongEncoding, h.Encoding, v.leios.Encoding, h.BlockNumber, h.Slot)
	}
	pool, ok := v.pools[h.IssuerVKey]
	if !ok {
		return fmt.Errorf("%w: %x", ErrUnknownIssuer, h.IssuerVKey[:8])
	}
	if vrf.PublicKey(h.VRFVKey) != pool.VRFVKey {
		return fmt.Errorf("%w: pool %s", ErrWrongVRFKey, pool.Name)
	}
	if start := v.clock.SlotStart(h.Slot); start.Sub(v.now()) > v.maxSkew {
		return fmt.Errorf("%w: slot %d starts in %v", ErrFutureSlot, h.Slot, start.Sub(v.now()).Round(time.Millisecond))
	}
	out, err := vrf.Verify(pool.VRFVKey, v.VRFInput(h.Slot), h.VRF.Proof)
	if err != nil || out != h.VRF.Output {
		return fmt.Errorf("%w: pool %s slot %d", ErrBadVRFProof, pool.Name, h.Slot)
	}
	if !IsLeader(out, pool.Sigma, v.f) {
		return fmt.Errorf("%w: pool %s slot %d", ErrNotLeader, pool.Name, h.Slot)
	}
	return h.VerifySignature()
}

// ValidateBlock checks the header and that the body is the one it commits to
// and within the RB body limit. Ledger rules are the LedgerDB's to apply.
func (v *Validator) ValidateBlock(b *block.Block) error {
	if err := v.ValidateHeader(b.Header); err != nil {
		return err
	}
	if v.rbMaxBodyBytes > 0 && len(b.Body.Bytes()) > v.rbMaxBodyBytes {
		return fmt.Errorf("%w: %d > %d bytes", ErrBodyTooLarge, len(b.Body.Bytes()), v.rbMaxBodyBytes)
	}
	if b.Header.LeiosCertified != (b.Body.Certificate != nil) {
		return fmt.Errorf("%w: flag %v", ErrCertFlag, b.Header.LeiosCertified)
	}
	if c := b.Body.Certificate; c != nil && c.Encoding != v.leios.Encoding {
		return fmt.Errorf("%w: a %s certificate on a %s network", ErrWrongEncoding, c.Encoding, v.leios.Encoding)
	}
	if b.Body.Certificate != nil && len(b.Body.Txs) > 0 {
		return fmt.Errorf("%w: it carries %d txs of its own", ErrCertRBTxs, len(b.Body.Txs))
	}
	return b.CheckBody()
}
