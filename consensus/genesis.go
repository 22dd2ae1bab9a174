package consensus

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/internal/strictjson"
	"github.com/leiosnode/leiosnode/ledger"
)

// Genesis is a network's fixed configuration, read from genesis.json.
// Stake is fixed for the life of the network (no epochs, no delegation).
type Genesis struct {
	// SystemStart is the wall-clock start of slot 0.
	SystemStart time.Time `json:"systemStart"`
	// SlotLengthMs is the length of one slot in milliseconds.
	SlotLengthMs int64 `json:"slotLengthMs"`
	// ActiveSlotsCoeff is f: the chance that a pool holding all the stake
	// leads a slot. Kept as the decimal text of the file, so every node
	// computes with the same exact rational.
	ActiveSlotsCoeff json.Number `json:"activeSlotsCoeff"`
	// SecurityParam is k: the maximum rollback, and how far behind the tip
	// the immutable tip is, in blocks.
	SecurityParam int `json:"securityParam"`
	// NetworkID is the address network id (0 on devnets).
	NetworkID byte `json:"networkId"`
	// EpochNonce seeds every slot's VRF input (hex, 32 bytes).
	EpochNonce string `json:"epochNonce"`
	// MaxClockSkewMs is how far into the future a header's slot may start
	// before it is refused.
	MaxClockSkewMs int64 `json:"maxClockSkewMs"`
	// Pools is the fixed stake distribution.
	Pools []Pool `json:"pools"`
	// InitialFunds maps addresses (hex or bech32) to lovelace.
	InitialFunds map[string]uint64 `json:"initialFunds"`
	// ProtocolParams are the ledger's parameters.
	ProtocolParams ledger.Params `json:"protocolParams"`
	// Leios holds the endorser-block parameters.
	Leios LeiosParams `json:"leios"`

	// FileHash is the Blake2b-256 of the whole file ReadGenesis read: the
	// network's identity, which every database of a node is stamped with.
	FileHash block.Hash `json:"-"`
}

// Pool is one block producer: its cold (issuer) key, its VRF key, its BLS
// voting key with the proof that its owner holds the secret key, its stake.
type Pool struct {
	Name       string `json:"name"`
	IssuerVKey string `json:"issuerVKey"` // hex ed25519 verification key
	VRFVKey    string `json:"vrfVKey"`    // hex VRF verification key
	BLSVKey    string `json:"blsVKey"`    // hex compressed BLS12-381 G2 point
	BLSPoP     string `json:"blsPoP"`     // hex proof of possession of BLSVKey
	Stake      uint64 `json:"stake"`
}

// LeiosParams are the Linear Leios parameters of Linear Leios, in slots and bytes.
type LeiosParams struct {
	RBMaxBodyBytes    int `json:"rbMaxBodyBytes"`
	EBMaxBodyBytes    int `json:"ebMaxBodyBytes"`
	EBMaxClosureBytes int `json:"ebMaxClosureBytes"`
	EBMaxTxs          int `json:"ebMaxTxs"`
	LHdr              int `json:"lHdr"`
	LVote             int `json:"lVote"`
	LDiff             int `json:"lDiff"`
	MinCertGap        int `json:"minCertGap"`
	// CommitteeStakeFraction is σ_c, CIP-0164's committee stake coverage:
	// the committee is the largest pools, in descending stake, until their
	// stake reaches this share of the total active stake (see truncate).
	// In (0, 1]. Kept as the decimal text of the file, so every node
	// computes with the same exact rational.
	CommitteeStakeFraction json.Number `json:"committeeStakeFraction"`
	// QuorumStakeFraction is τ, CIP-0164's quorum stake threshold: a
	// certificate's signers hold at least this share of the total active
	// stake — all pools' stake, not the committee's. In (0, σ_c), as the
	// CIP requires, so the whole committee always reaches it. Decimal text
	// as σ_c.
	QuorumStakeFraction json.Number `json:"quorumStakeFraction"`
	// Encoding is the network's Leios encodings, "cip" or "prototype":
	// the shapes of the header's Leios fields, EB bodies and certificates,
	// and the message a vote signs (block.Encoding), whichever protocol
	// set carries them. Block and EB hashes depend on it, so it is the
	// network's, never a node's. A genesis without it is "prototype", what
	// it was written for; a new one is "cip" (DefaultLeiosParams).
	Encoding block.Encoding `json:"encoding"`
}

// MaxCommitteeSeats is the most seats a 16-bit seat number can name.
const MaxCommitteeSeats = 1 << 16

// DefaultLeiosParams are the prototype values (docs/protocol.md,
// "Linear Leios"), with CIP-0164's committee: σ_c = 0.99 of the active stake,
// quorum τ = 0.75 of it; and CIP-0164's encodings.
func DefaultLeiosParams() LeiosParams {
	return LeiosParams{
		RBMaxBodyBytes:         90_112,
		EBMaxBodyBytes:         block.DefaultEBLimits.MaxBodyBytes,
		EBMaxClosureBytes:      block.DefaultEBLimits.MaxClosureBytes,
		EBMaxTxs:               block.DefaultEBLimits.MaxTxs,
		LHdr:                   1,
		LVote:                  4,
		LDiff:                  7,
		MinCertGap:             10,
		CommitteeStakeFraction: "0.99",
		QuorumStakeFraction:    "0.75",
		Encoding:               block.EncodingCIP,
	}
}

// UnmarshalJSON decodes the parameters over the values p already holds
// (a template's defaults), refusing a field it does not know. The fields
// of the Fait Accompli committee, which CIP-0164 dropped, are refused by
// name with what replaced them, so an old genesis or template says what
// to change rather than only that a field is unknown.
func (p *LeiosParams) UnmarshalJSON(b []byte) error {
	var dropped struct {
		CommitteeSeats json.RawMessage `json:"committeeSeats"`
		Quorum         json.RawMessage `json:"quorum"`
	}
	if err := json.Unmarshal(b, &dropped); err != nil {
		return fmt.Errorf("leios: %w", err)
	}
	switch {
	case dropped.CommitteeSeats != nil:
		return errors.New("leios.committeeSeats is no longer a parameter: the committee is chosen by stake-based truncation; set leios.committeeStakeFraction (σ_c, the share of active stake it covers, default 0.99) instead")
	case dropped.Quorum != nil:
		return errors.New("leios.quorum is no longer a parameter: the quorum is a share of the total active stake, not of the committee's; set leios.quorumStakeFraction (τ, default 0.75) instead")
	}
	type plain LeiosParams // without this method
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode((*plain)(p)); err != nil {
		if errors.Is(err, block.ErrUnknownEncoding) {
			return fmt.Errorf("leios.encoding %w", err)
		}
		return fmt.Errorf("leios: %w", err)
	}
	return nil
}

// committeeFractions returns σ_c and τ as exact rationals, or the first
// that is not a number or out of its range.
func (p LeiosParams) committeeFractions() (sigma, tau *big.Rat, err error) {
	sigma, ok := new(big.Rat).SetString(string(p.CommitteeStakeFraction))
	if !ok {
		return nil, nil, fmt.Errorf("leios.committeeStakeFraction %q is not a number", p.CommitteeStakeFraction)
	}
	if sigma.Sign() <= 0 || sigma.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, nil, fmt.Errorf("leios.committeeStakeFraction %s must be in (0, 1]", p.CommitteeStakeFraction)
	}
	tau, ok = new(big.Rat).SetString(string(p.QuorumStakeFraction))
	if !ok {
		return nil, nil, fmt.Errorf("leios.quorumStakeFraction %q is not a number", p.QuorumStakeFraction)
	}
	if tau.Sign() <= 0 || tau.Cmp(sigma) >= 0 {
		return nil, nil, fmt.Errorf("leios.quorumStakeFraction %s must be in (0, leios.committeeStakeFraction %s)", p.QuorumStakeFraction, p.CommitteeStakeFraction)
	}
	return sigma, tau, nil
}

// BlockTxBytes is the most tx bytes one block carries, its RB body and its
// EB's closure: the unit the edge's backlog and the mempool's room count
// in (BacklogEBs, MempoolBlocks).
func (p LeiosParams) BlockTxBytes() int { return p.RBMaxBodyBytes + p.EBMaxClosureBytes }

// EBLimits returns the EB limits and encoding of these parameters.
func (p LeiosParams) EBLimits() block.EBLimits {
	return block.EBLimits{MaxBodyBytes: p.EBMaxBodyBytes, MaxClosureBytes: p.EBMaxClosureBytes, MaxTxs: p.EBMaxTxs, Encoding: p.Encoding}
}

// ReadGenesis reads and checks a genesis file. A field the genesis does
// not have, or a key given twice, is an error: a misspelt parameter must
// not take its default, nor a repeated one its last value.
func ReadGenesis(path string) (*Genesis, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("genesis: %w", err)
	}
	g := Genesis{FileHash: block.HashBytes(b)}
	if err := strictjson.Decode(b, &g); err != nil {
		return nil, fmt.Errorf("genesis %s: %w", path, err)
	}
	if err := g.Check(); err != nil {
		return nil, fmt.Errorf("genesis %s: %w", path, err)
	}
	return &g, nil
}

// WriteGenesis writes g as indented JSON.
func WriteGenesis(path string, g *Genesis) error {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Check reports the first inconsistency in g.
func (g *Genesis) Check() error {
	if g.SystemStart.IsZero() {
		return errors.New("systemStart is missing: slot 0 must start at a set time")
	}
	if err := g.checkRanges(); err != nil {
		return err
	}
	f, err := g.ActiveSlots()
	if err != nil {
		return err
	}
	if f.Sign() <= 0 || f.Cmp(big.NewRat(1, 1)) > 0 {
		return fmt.Errorf("activeSlotsCoeff %s must be in (0, 1]", g.ActiveSlotsCoeff)
	}
	if _, err := g.Nonce(); err != nil {
		return err
	}
	if len(g.Pools) == 0 {
		return errors.New("no pools")
	}
	if _, _, err := g.Leios.committeeFractions(); err != nil {
		return err
	}
	if _, err := g.Leios.Encoding.MarshalText(); err != nil {
		return fmt.Errorf("leios.encoding %w", err)
	}
	var total uint64
	issuers := make(map[[32]byte]int, len(g.Pools))
	votingKeys := make(map[[bls.PublicKeySize]byte]int, len(g.Pools))
	for i, p := range g.Pools {
		issuer, err := decodeKey(p.IssuerVKey)
		if err != nil {
			return fmt.Errorf("pool %d (%s) issuerVKey: %w", i, p.Name, err)
		}
		if j, dup := issuers[issuer]; dup {
			return fmt.Errorf("pool %d (%s) issuerVKey is pool %d's too", i, p.Name, j)
		}
		issuers[issuer] = i
		if _, err := decodeKey(p.VRFVKey); err != nil {
			return fmt.Errorf("pool %d (%s) vrfVKey: %w", i, p.Name, err)
		}
		votingKey, err := p.provenVotingKey()
		if err != nil {
			return fmt.Errorf("pool %d (%s) %w", i, p.Name, err)
		}
		if j, dup := votingKeys[votingKey.Bytes()]; dup {
			return fmt.Errorf("pool %d (%s) blsVKey is pool %d's too", i, p.Name, j)
		}
		votingKeys[votingKey.Bytes()] = i
		if total+p.Stake < total {
			return errors.New("the pools' total stake overflows 64 bits")
		}
		total += p.Stake
	}
	if total == 0 {
		return errors.New("pools hold no stake")
	}
	if _, err := g.committeeMembers(); err != nil {
		return err
	}
	if _, err := ledger.GenesisUTxO(g.InitialFunds); err != nil {
		return err
	}
	return nil
}

// The bounds of the genesis's numbers besides those checked with their
// meaning (activeSlotsCoeff, committee, stake).
const (
	// maxSlots bounds every count of slots or blocks: far past any
	// sensible network, and far from overflowing the sums they go into.
	maxSlots = 1_000_000
	// maxRBBodyBytes keeps a ranking block, header and body, inside block
	// fetch's largest message (2.5 MB).
	maxRBBodyBytes = 2_000_000
	// maxLovelace is all the ada there can be: a fee or an output deposit
	// above it could never be paid.
	maxLovelace = 45_000_000_000_000_000
	// maxNetworkID is the largest network id an address header holds.
	maxNetworkID = 15
)

// checkRanges reports the first number of g out of its range, naming its
// field.
func (g *Genesis) checkRanges() error {
	l, p := g.Leios, g.ProtocolParams
	// In order: each bound uses only fields checked before it.
	for _, r := range []struct {
		field         string
		value, lo, hi int64
	}{
		{"slotLengthMs", g.SlotLengthMs, 1, 3_600_000},
		{"securityParam", int64(g.SecurityParam), 1, maxSlots},
		{"networkId", int64(g.NetworkID), 0, maxNetworkID},
		{"maxClockSkewMs", g.MaxClockSkewMs, 0, 3_600_000},
		{"leios.rbMaxBodyBytes", int64(l.RBMaxBodyBytes), 1, maxRBBodyBytes},
		{"leios.ebMaxBodyBytes", int64(l.EBMaxBodyBytes), 1, math.MaxInt32},
		{"leios.ebMaxClosureBytes", int64(l.EBMaxClosureBytes), 1, math.MaxInt32},
		{"leios.ebMaxTxs", int64(l.EBMaxTxs), 1, math.MaxInt32},
		{"leios.lHdr", int64(l.LHdr), 0, maxSlots},
		{"leios.lVote", int64(l.LVote), 1, maxSlots},
		{"leios.lDiff", int64(l.LDiff), 0, maxSlots},
		{"leios.minCertGap", int64(l.MinCertGap), 0, maxSlots},
		{"protocolParams.maxTxSize", clamp(p.MaxTxSize), 1, math.MaxInt32},
		{"protocolParams.minFeeA", clamp(p.MinFeeA), 0, maxLovelace / max(clamp(p.MaxTxSize), 1)},
		{"protocolParams.minFeeB", clamp(p.MinFeeB), 0, maxLovelace - clamp(p.MinFeeA)*clamp(p.MaxTxSize)},
		{"protocolParams.coinsPerUTxOByte", clamp(p.CoinsPerUTxOByte), 0, maxLovelace / (160 + clamp(p.MaxTxSize))},
		{"protocolParams.networkId", int64(p.NetworkID), 0, maxNetworkID},
	} {
		if r.value < r.lo || r.value > r.hi {
			return fmt.Errorf("%s is %d: it must be in [%d, %d]", r.field, r.value, r.lo, r.hi)
		}
	}
	return nil
}

// clamp is v as an int64, or the largest int64 if v is larger: out of
// every range checkRanges checks.
func clamp(v uint64) int64 { return int64(min(v, math.MaxInt64)) }

// ActiveSlots returns f as an exact rational.
func (g *Genesis) ActiveSlots() (*big.Rat, error) {
	f, ok := new(big.Rat).SetString(string(g.ActiveSlotsCoeff))
	if !ok {
		return nil, fmt.Errorf("activeSlotsCoeff %q is not a number", g.ActiveSlotsCoeff)
	}
	return f, nil
}

// Nonce returns the epoch nonce bytes.
func (g *Genesis) Nonce() ([32]byte, error) {
	var n [32]byte
	b, err := hex.DecodeString(g.EpochNonce)
	if err != nil || len(b) != len(n) {
		return n, fmt.Errorf("epochNonce %q is not 32 bytes of hex", g.EpochNonce)
	}
	copy(n[:], b)
	return n, nil
}

// SlotLength is the slot duration.
func (g *Genesis) SlotLength() time.Duration { return time.Duration(g.SlotLengthMs) * time.Millisecond }

// SetVotingKey registers the pool's BLS key and its proof of possession.
func (p *Pool) SetVotingKey(key *bls.PublicKey, proof *bls.PossessionProof) {
	k, pop := key.Bytes(), proof.Bytes()
	p.BLSVKey, p.BLSPoP = hex.EncodeToString(k[:]), hex.EncodeToString(pop[:])
}

// votingKey decodes the pool's BLS public key.
func (p *Pool) votingKey() (*bls.PublicKey, error) {
	if p.BLSVKey == "" {
		return nil, errors.New("has no blsVKey: every pool needs a BLS voting key")
	}
	b, err := hex.DecodeString(p.BLSVKey)
	if err != nil {
		return nil, fmt.Errorf("blsVKey is not hex: %w", err)
	}
	pk, err := bls.PublicKeyFromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("blsVKey: %w", err)
	}
	return pk, nil
}

// provenVotingKey decodes the pool's BLS key and checks that its proof of
// possession proves it: an unproven key could be a rogue key, chosen to
// cancel honest keys out of an aggregate and forge a certificate alone.
func (p *Pool) provenVotingKey() (*bls.PublicKey, error) {
	pk, err := p.votingKey()
	if err != nil {
		return nil, err
	}
	if p.BLSPoP == "" {
		return nil, errors.New("has no blsPoP: a BLS key is registered only with its proof of possession")
	}
	b, err := hex.DecodeString(p.BLSPoP)
	if err != nil {
		return nil, fmt.Errorf("blsPoP is not hex: %w", err)
	}
	proof, err := bls.PossessionProofFromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("blsPoP: %w", err)
	}
	if !pk.VerifyPossession(proof) {
		return nil, errors.New("blsPoP does not prove possession of blsVKey")
	}
	return pk, nil
}

func decodeKey(s string) ([32]byte, error) {
	var k [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(k) {
		return k, fmt.Errorf("%q is not a 32-byte hex key", s)
	}
	copy(k[:], b)
	return k, nil
}
