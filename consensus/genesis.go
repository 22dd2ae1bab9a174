package consensus

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"

	"github.com/leiosnode/leiosnode/block"
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
	// InitialFunds maps address hex to lovelace.
	InitialFunds map[string]uint64 `json:"initialFunds"`
	// ProtocolParams are the ledger's parameters.
	ProtocolParams ledger.Params `json:"protocolParams"`
	// Leios holds the endorser-block parameters.
	Leios LeiosParams `json:"leios"`
}

// Pool is one block producer: its cold (issuer) key, its VRF key, its stake.
type Pool struct {
	Name       string `json:"name"`
	IssuerVKey string `json:"issuerVKey"` // hex ed25519 verification key
	VRFVKey    string `json:"vrfVKey"`    // hex VRF verification key
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
}

// DefaultLeiosParams are the prototype values (ARCHITECTURE.md, "The protocol").
func DefaultLeiosParams() LeiosParams {
	return LeiosParams{
		RBMaxBodyBytes:    90_112,
		EBMaxBodyBytes:    block.DefaultEBLimits.MaxBodyBytes,
		EBMaxClosureBytes: block.DefaultEBLimits.MaxClosureBytes,
		EBMaxTxs:          block.DefaultEBLimits.MaxTxs,
		LHdr:              1,
		LVote:             4,
		LDiff:             7,
		MinCertGap:        10,
	}
}

// EBLimits returns the EB limits of these parameters.
func (p LeiosParams) EBLimits() block.EBLimits {
	return block.EBLimits{MaxBodyBytes: p.EBMaxBodyBytes, MaxClosureBytes: p.EBMaxClosureBytes, MaxTxs: p.EBMaxTxs}
}

// ReadGenesis reads and checks a genesis file.
func ReadGenesis(path string) (*Genesis, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("genesis: %w", err)
	}
	var g Genesis
	if err := json.Unmarshal(b, &g); err != nil {
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
	if g.SlotLengthMs <= 0 {
		return errors.New("slotLengthMs must be positive")
	}
	f, err := g.ActiveSlots()
	if err != nil {
		return err
	}
	if f.Sign() <= 0 || f.Cmp(big.NewRat(1, 1)) > 0 {
		return fmt.Errorf("activeSlotsCoeff %s must be in (0, 1]", g.ActiveSlotsCoeff)
	}
	if g.SecurityParam <= 0 {
		return errors.New("securityParam must be positive")
	}
	if _, err := g.Nonce(); err != nil {
		return err
	}
	if len(g.Pools) == 0 {
		return errors.New("no pools")
	}
	var total uint64
	for i, p := range g.Pools {
		if _, err := decodeKey(p.IssuerVKey); err != nil {
			return fmt.Errorf("pool %d (%s) issuerVKey: %w", i, p.Name, err)
		}
		if _, err := decodeKey(p.VRFVKey); err != nil {
			return fmt.Errorf("pool %d (%s) vrfVKey: %w", i, p.Name, err)
		}
		total += p.Stake
	}
	if total == 0 {
		return errors.New("pools hold no stake")
	}
	if _, err := ledger.GenesisUTxO(g.InitialFunds); err != nil {
		return err
	}
	return nil
}

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

func decodeKey(s string) ([32]byte, error) {
	var k [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(k) {
		return k, fmt.Errorf("%q is not a 32-byte hex key", s)
	}
	copy(k[:], b)
	return k, nil
}
