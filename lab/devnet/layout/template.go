package layout

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// devnetTemplate is configs/devnet.json (go:embed cannot reach outside this
// directory, so templates/devnet.json is a copy; TestEmbeddedTemplate keeps
// the two equal).
//
//go:embed templates/devnet.json
var devnetTemplate []byte

// Template is a genesis template (configs/*.json): the network parameters
// every generated genesis copies, and the amounts the generator hands out.
// The generated parts of a genesis (system start, nonce, pools, funds) are
// not in it.
type Template struct {
	SlotLengthMs     int64                 `json:"slotLengthMs"`
	ActiveSlotsCoeff json.Number           `json:"activeSlotsCoeff"`
	SecurityParam    int                   `json:"securityParam"`
	NetworkID        byte                  `json:"networkId"`
	MaxClockSkewMs   int64                 `json:"maxClockSkewMs"`
	ProtocolParams   ledger.Params         `json:"protocolParams"`
	Leios            consensus.LeiosParams `json:"leios"`
	// PoolStake is the stake of each generated pool; all pools get the same.
	PoolStake uint64 `json:"poolStake"`
	// FundsPerAddress is the lovelace of each generated funded address.
	FundsPerAddress uint64 `json:"fundsPerAddress"`
}

// LoadTemplate reads a template file; an empty path is the embedded devnet
// template.
func LoadTemplate(path string) (Template, error) {
	if path == "" {
		return parseTemplate(devnetTemplate)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Template{}, fmt.Errorf("template: %w", err)
	}
	t, err := parseTemplate(b)
	if err != nil {
		return Template{}, fmt.Errorf("template %s: %w", path, err)
	}
	return t, nil
}

// parseTemplate decodes a template. Keys it omits take the defaults of
// ledger.DefaultParams and consensus.DefaultLeiosParams; unknown keys are
// errors, so a misspelt parameter is not silently ignored.
func parseTemplate(b []byte) (Template, error) {
	t := Template{ProtocolParams: ledger.DefaultParams(), Leios: consensus.DefaultLeiosParams()}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Template{}, err
	}
	switch {
	case t.PoolStake == 0:
		return Template{}, errors.New("poolStake must be positive")
	case t.FundsPerAddress == 0:
		return Template{}, errors.New("fundsPerAddress must be positive")
	case t.ProtocolParams.NetworkID != t.NetworkID:
		return Template{}, fmt.Errorf("networkId %d and protocolParams.networkId %d differ", t.NetworkID, t.ProtocolParams.NetworkID)
	}
	return t, nil
}

// Genesis is the genesis of this template without its generated parts.
func (t Template) Genesis() *consensus.Genesis {
	return &consensus.Genesis{
		SlotLengthMs:     t.SlotLengthMs,
		ActiveSlotsCoeff: t.ActiveSlotsCoeff,
		SecurityParam:    t.SecurityParam,
		NetworkID:        t.NetworkID,
		MaxClockSkewMs:   t.MaxClockSkewMs,
		InitialFunds:     map[string]uint64{},
		ProtocolParams:   t.ProtocolParams,
		Leios:            t.Leios,
	}
}
