package node

import (
	"crypto/ed25519"
	"fmt"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/keys"
)

// inputs are the files the config names besides the genesis and the
// databases: read and checked before a database opens, so a wrong path or
// key fails at once, naming its setting.
type inputs struct {
	nodeKey  ed25519.PrivateKey
	topology *config.Topology
	producer *producer // nil on a relay
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
	if in.producer, err = readProducer(cfg, n.validator); err != nil {
		return nil, err
	}
	return in, nil
}
