package node

import (
	"crypto/ed25519"
	"fmt"
	"net"
	"strings"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/network"
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
	if in.nodeKey, err = readPrivate(cfg.NodeKeyFile, func(path string) (ed25519.PrivateKey, error) {
		return keys.ReadSigningKey(path, keys.Node)
	}); err != nil {
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

// readPrivate reads a signing key file with read, then refuses it if its
// group or others may read it (keys.CheckPrivate): a key others can copy
// lets them sign as this node, so it never starts on one.
func readPrivate[K any](path string, read func(string) (K, error)) (K, error) {
	key, err := read(path)
	if err == nil {
		err = keys.CheckPrivate(path)
	}
	if err != nil {
		var none K
		return none, err
	}
	return key, nil
}

// bindAddrs checks the config's libp2p listen addresses (when the node
// listens on them itself) by binding them for a moment, and binds its
// HTTP address: nil without httpAddr.
func bindAddrs(cfg *config.Config, libp2p bool) (net.Listener, error) {
	if libp2p {
		if err := network.ProbeListenAddrs(cfg.ListenAddrs); err != nil {
			return nil, fmt.Errorf("config %s: listenAddrs %s: %w", cfg.Path, strings.Join(cfg.ListenAddrs, " "), err)
		}
	}
	if cfg.HTTPAddr == "" {
		return nil, nil
	}
	l, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("config %s: httpAddr %s: %w", cfg.Path, cfg.HTTPAddr, err)
	}
	return l, nil
}

// CheckConfig checks what New checks before it opens a database — the
// genesis, the keys and topology the config names, and that its addresses
// are free — for leiosnode db check: the node, stopped, would start on it.
func CheckConfig(cfg *config.Config) error {
	g, err := consensus.ReadGenesis(cfg.GenesisFile)
	if err != nil {
		return err
	}
	n := &Node{cfg: cfg}
	n.genesis = g
	if n.validator, err = consensus.NewValidator(g, nil); err != nil {
		return fmt.Errorf("genesis %s: %w", cfg.GenesisFile, err)
	}
	if _, err := n.readInputs(); err != nil {
		return err
	}
	l, err := bindAddrs(cfg, true)
	if l != nil {
		_ = l.Close()
	}
	return err
}
