package node

import (
	"crypto/ed25519"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/vrf"
)

// inputs are the files the config names besides the genesis and the
// databases: read and checked before a database opens, so a wrong path or
// key fails at once, naming its setting.
type inputs struct {
	nodeKey  ed25519.PrivateKey
	topology *config.Topology
	issuer   ed25519.PrivateKey // nil on a relay
	vrfKey   *vrf.SecretKey
	voter    *consensus.Voter // nil unless a producer with a BLS key
}

func (n *Node) readInputs() (*inputs, error) {
	cfg := n.cfg
	in := &inputs{}
	var err error
	if in.nodeKey, err = keys.ReadSigningKey(cfg.NodeKeyFile, keys.Node); err != nil {
		return nil, fmt.Errorf("config %s: nodeKeyFile: %w", cfg.Path, err)
	}
	if in.topology, err = config.ReadTopology(cfg.TopologyFile); err != nil {
		return nil, err
	}
	if cfg.IssuerKeyFile == "" {
		return in, nil
	}
	if in.issuer, err = keys.ReadSigningKey(cfg.IssuerKeyFile, keys.StakePool); err != nil {
		return nil, fmt.Errorf("config %s: issuerSigningKeyFile: %w", cfg.Path, err)
	}
	if in.vrfKey, err = keys.ReadVRFSigningKey(cfg.VRFKeyFile); err != nil {
		return nil, fmt.Errorf("config %s: vrfSigningKeyFile: %w", cfg.Path, err)
	}
	var issuerVKey block.Bytes32
	copy(issuerVKey[:], in.issuer.Public().(ed25519.PublicKey))
	pool, ok := n.validator.Pool(issuerVKey)
	if !ok {
		return nil, fmt.Errorf("config %s: issuerSigningKeyFile %s: no pool of genesis %s has this issuer key",
			cfg.Path, cfg.IssuerKeyFile, cfg.GenesisFile)
	}
	if pool.VRFVKey != vrf.PublicKey(in.vrfKey.Public()) {
		return nil, fmt.Errorf("config %s: vrfSigningKeyFile %s: not the VRF key of pool %s, whose issuer key is issuerSigningKeyFile's",
			cfg.Path, cfg.VRFKeyFile, pool.Name)
	}
	if cfg.BLSKeyFile == "" {
		return in, nil
	}
	votingKey, err := keys.ReadBLSSigningKey(cfg.BLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("config %s: blsSigningKeyFile: %w", cfg.Path, err)
	}
	if in.voter, err = n.validator.Committee().NewVoter(issuerVKey, votingKey); err != nil {
		return nil, fmt.Errorf("config %s: blsSigningKeyFile %s: %w", cfg.Path, cfg.BLSKeyFile, err)
	}
	return in, nil
}
