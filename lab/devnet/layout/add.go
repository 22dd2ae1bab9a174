package layout

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/keys/peerid"
	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// ErrPoolNeedsGenesis refuses to add a pool to a written network: a pool
// lives in the genesis (its stake and its VRF and BLS keys), and every
// node's databases are stamped with the genesis they started on, so a pool
// more is a new network.
var ErrPoolNeedsGenesis = errors.New("a pool is part of the genesis (its stake, VRF and BLS keys) and every node's databases belong to the genesis they started on: a network with one pool more is a new network; write it with leiosnode genesis and one host more, and start every node on it with empty databases")

// Added is the relay AddRelay wrote, and what it was given to start from.
type Added struct {
	Node
	// Bootstrap is the peer the relay's topology names: the network's first
	// pool. Peer sharing finds it the others.
	Bootstrap string
	// PoolsShare says whether the pools take part in peer sharing (a
	// network written with relays); if not, the relay knows the first pool
	// only, and the others learn of it only when it dials them.
	PoolsShare bool
	// OnHosts: the network lays its nodes out on several hosts, and the
	// relay's directory holds its own copy of the genesis.
	OnHosts bool
}

// AddRelay writes a new relay into the network in dir, listening on host
// (parseHost's forms): DIR/relay-j/ with its node key, config.json and a
// topology naming the first pool. No other node's files change: a relay
// dials the pools, and they take a peer they do not know in (within their
// limit of unknown peers).
func AddRelay(dir, host string) (*Added, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	g, err := consensus.ReadGenesis(filepath.Join(dir, genesisFileName))
	if err != nil {
		return nil, fmt.Errorf("--dir %s: not a network leiosnode genesis wrote: %w", dir, err)
	}
	place, err := parseHost(host)
	if err != nil {
		return nil, err
	}
	first := filepath.Join(dir, "node-0")
	bootstrap, err := firstPoolAddr(dir, first)
	if err != nil {
		return nil, err
	}
	name, err := nextRelayName(dir, place)
	if err != nil {
		return nil, err
	}
	pool, err := config.Load(filepath.Join(first, configFileName))
	if err != nil {
		return nil, err
	}
	_, err = os.Stat(filepath.Join(first, genesisFileName))
	d := &Layout{Dir: dir, Genesis: g, OnHosts: err == nil, Trace: pool.TraceFile != ""}
	r, err := writeNodeIdentity(dir, name)
	if err != nil {
		return nil, err
	}
	r.ListenAddr, r.DialAddr, r.HTTPAddr = place.listen, place.dial, place.http
	if err := d.writeNodeConfig(r, false, protocolset.Both, []string{bootstrap}, pool.LogLevel); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Added{Node: r, Bootstrap: bootstrap, PoolsShare: pool.SharesPeers(), OnHosts: d.OnHosts}, nil
}

// firstPoolAddr is where the network's nodes dial its first pool: the
// address the other nodes' topologies give it, or, alone, its own listen
// address if another host can dial that.
func firstPoolAddr(dir, first string) (string, error) {
	nodeKey, err := keys.ReadSigningKey(filepath.Join(first, nodeKeyFileName), keys.Node)
	if err != nil {
		return "", fmt.Errorf("the network's first pool: %w", err)
	}
	id, err := peerid.Of(nodeKey.Public().(ed25519.PublicKey))
	if err != nil {
		return "", err
	}
	suffix := "/p2p/" + id.String()
	topologies, err := filepath.Glob(filepath.Join(dir, "*", topologyFileName))
	if err != nil {
		return "", err
	}
	for _, file := range topologies {
		t, err := config.ReadTopology(file)
		if err != nil {
			return "", err
		}
		if i := slices.IndexFunc(t.Peers, func(p string) bool { return strings.HasSuffix(p, suffix) }); i >= 0 {
			return t.Peers[i], nil
		}
	}
	cfg, err := config.Load(filepath.Join(first, configFileName))
	if err != nil {
		return "", err
	}
	if len(cfg.ListenAddrs) == 0 || strings.Contains(cfg.ListenAddrs[0], "/0.0.0.0/") {
		return "", fmt.Errorf("%s: no other node names the first pool, and it listens on no address another host can dial", first)
	}
	return cfg.ListenAddrs[0] + suffix, nil
}

// nextRelayName is the first relay-j not in dir, refusing a place another
// node of the network is reached at already (as its listen address, or as
// a topology names it).
func nextRelayName(dir string, place nodePlace) (string, error) {
	configs, err := filepath.Glob(filepath.Join(dir, "*", configFileName))
	if err != nil {
		return "", err
	}
	for _, file := range configs {
		cfg, err := config.Load(file)
		if err != nil {
			return "", err
		}
		node := filepath.Base(filepath.Dir(file))
		if slices.Contains(cfg.ListenAddrs, place.dial) {
			return "", fmt.Errorf("host %s: %s listens there already", place.dial, node)
		}
		if t, err := config.ReadTopology(filepath.Join(filepath.Dir(file), topologyFileName)); err == nil {
			for _, p := range t.Peers {
				if addr, _, _ := strings.Cut(p, "/p2p/"); addr == place.dial {
					return "", fmt.Errorf("host %s: %s's topology names a node there already", place.dial, node)
				}
			}
		}
	}
	for j := 0; ; j++ {
		name := fmt.Sprintf("relay-%d", j)
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
			return name, nil
		} else if err != nil {
			return "", err
		}
	}
}
