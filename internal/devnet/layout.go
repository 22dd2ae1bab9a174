package devnet

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/keys"
)

// The files of a generated devnet. Paths inside a node's config are
// relative to the node's directory, so a devnet directory can be moved.
const (
	genesisFileName  = "genesis.json"
	fundsDirName     = "funds"
	configFileName   = "config.json"
	topologyFileName = "topology.json"
	nodeKeyFileName  = "node.skey"
	issuerSKeyName   = "issuer.skey"
	issuerVKeyName   = "issuer.vkey"
	vrfSKeyName      = "vrf.skey"
	vrfVKeyName      = "vrf.vkey"
	blsSKeyName      = "bls.skey"
	blsVKeyName      = "bls.vkey"
	databaseDirName  = "db"
	nodeLogFileName  = "node.log"
)

// Spec says what Write generates; the genesis and devnet commands build it
// from the same flags.
type Spec struct {
	// Dir receives the devnet; it is created if missing and must not hold a
	// genesis.json already.
	Dir string
	// Nodes is the number of block-producing nodes, one pool each (≥ 1).
	Nodes int
	// Funded is the number of funded addresses (≥ 0).
	Funded int
	// Template gives the network parameters and what each pool and funded
	// address gets.
	Template Template
	// SystemStart is the start of slot 0.
	SystemStart time.Time
	// BasePort, when non-zero, gives node i the libp2p port BasePort+2i and
	// the HTTP port BasePort+2i+1; zero lets the OS pick free ports.
	BasePort int
	// LogLevel goes into every node's config ("" = the node's default).
	LogLevel string
	// ProxyLinks routes every link through the supervisor: node i's
	// topology names, for each peer j, a port the supervisor forwards to
	// j's libp2p port (see Link), so that the chaos mode can cut links.
	// The ports follow the nodes' (from BasePort+2·Nodes when BasePort is
	// set).
	ProxyLinks bool
}

// Layout is the devnet Write wrote: where its files are, its genesis and
// its nodes.
type Layout struct {
	Dir     string // absolute
	Genesis *consensus.Genesis
	Nodes   []Node
	// Links are the proxied links, when Spec.ProxyLinks asked for them:
	// node From's topology names To at Addr.
	Links []Link
}

// Node is one node of a devnet.
type Node struct {
	Name       string // node-i, also its pool's name
	Dir        string // absolute
	ConfigFile string // absolute
	PeerID     peer.ID
	ListenAddr string // libp2p multiaddr, without /p2p
	HTTPAddr   string // host:port of GET /status
}

// Write generates a devnet: DIR/genesis.json, DIR/funds/ with the
// payment keys of the funded addresses, and per node DIR/node-i/ with its
// keys, config.json and topology.json (a full mesh).
func Write(spec Spec) (*Layout, error) {
	if spec.Nodes < 1 {
		return nil, fmt.Errorf("a devnet needs at least one node, not %d", spec.Nodes)
	}
	if spec.Funded < 0 {
		return nil, fmt.Errorf("funded addresses: %d is negative", spec.Funded)
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, genesisFileName)); err == nil {
		return nil, fmt.Errorf("%s already holds a devnet (genesis.json exists)", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, fundsDirName), 0o755); err != nil {
		return nil, err
	}
	portCount := 2 * spec.Nodes
	if spec.ProxyLinks {
		portCount += spec.Nodes * (spec.Nodes - 1)
	}
	ports, err := devnetPorts(spec.BasePort, portCount)
	if err != nil {
		return nil, err
	}

	g := spec.Template.genesis()
	g.SystemStart = spec.SystemStart.UTC().Truncate(time.Millisecond)
	g.EpochNonce = randomNonce()
	d := &Layout{Dir: dir, Genesis: g}
	for i := range spec.Nodes {
		n, pool, err := writeNodeKeys(dir, i)
		if err != nil {
			return nil, err
		}
		pool.Stake = spec.Template.PoolStake
		n.ListenAddr = fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", ports[2*i])
		n.HTTPAddr = fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])
		g.Pools = append(g.Pools, pool)
		d.Nodes = append(d.Nodes, n)
	}
	if spec.ProxyLinks {
		next := 2 * spec.Nodes
		for from := range spec.Nodes {
			for to := range spec.Nodes {
				if to != from {
					d.Links = append(d.Links, Link{From: from, To: to, Addr: fmt.Sprintf("127.0.0.1:%d", ports[next])})
					next++
				}
			}
		}
	}
	for i := range spec.Funded {
		addr, err := keys.GeneratePaymentKeyFiles(filepath.Join(dir, fundsDirName, fmt.Sprintf("payment-%d", i)), g.NetworkID)
		if err != nil {
			return nil, fmt.Errorf("payment key %d: %w", i, err)
		}
		g.InitialFunds[hex.EncodeToString(addr)] = spec.Template.FundsPerAddress
	}
	if err := g.Check(); err != nil {
		return nil, fmt.Errorf("generated genesis: %w", err)
	}
	if err := consensus.WriteGenesis(filepath.Join(dir, genesisFileName), g); err != nil {
		return nil, err
	}
	for i, n := range d.Nodes {
		if err := writeNodeConfig(d, i, spec.LogLevel); err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return d, nil
}

// Print tells the user what was written and how to reach each node.
func (d *Layout) Print(w io.Writer) {
	g := d.Genesis
	fmt.Fprintf(w, "devnet in %s: %d pools, %d funded addresses, system start %s, slot %d ms, f %s, k %d\n",
		d.Dir, len(g.Pools), len(g.InitialFunds), g.SystemStart.Format(time.RFC3339Nano), g.SlotLengthMs, g.ActiveSlotsCoeff, g.SecurityParam)
	for _, n := range d.Nodes {
		fmt.Fprintf(w, "  %s  %s/p2p/%s  http://%s\n", n.Name, n.ListenAddr, n.PeerID, n.HTTPAddr)
	}
	if len(d.Links) > 0 {
		fmt.Fprintf(w, "  the nodes dial one another through %d link proxies of this devnet (e.g. %s dials %s at %s), which can cut them\n",
			len(d.Links), d.Nodes[d.Links[0].From].Name, d.Nodes[d.Links[0].To].Name, d.Links[0].Addr)
	}
}

// writeNodeKeys creates DIR/node-i/ and its node, issuer, VRF and BLS
// voting keys, and returns the node and its pool (without stake).
func writeNodeKeys(dir string, i int) (Node, consensus.Pool, error) {
	name := fmt.Sprintf("node-%d", i)
	n := Node{Name: name, Dir: filepath.Join(dir, name)}
	n.ConfigFile = filepath.Join(n.Dir, configFileName)
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return n, consensus.Pool{}, err
	}
	nodeKey, err := keys.GenerateKeyFiles(keys.Node, filepath.Join(n.Dir, nodeKeyFileName), "")
	if err != nil {
		return n, consensus.Pool{}, fmt.Errorf("%s node key: %w", name, err)
	}
	if n.PeerID, err = keys.PeerID(nodeKey); err != nil {
		return n, consensus.Pool{}, fmt.Errorf("%s peer id: %w", name, err)
	}
	issuer, err := keys.GenerateKeyFiles(keys.StakePool, filepath.Join(n.Dir, issuerSKeyName), filepath.Join(n.Dir, issuerVKeyName))
	if err != nil {
		return n, consensus.Pool{}, fmt.Errorf("%s issuer key: %w", name, err)
	}
	vrfKey, err := keys.GenerateVRFKeyFiles(filepath.Join(n.Dir, vrfSKeyName), filepath.Join(n.Dir, vrfVKeyName))
	if err != nil {
		return n, consensus.Pool{}, fmt.Errorf("%s VRF key: %w", name, err)
	}
	votingKey, proof, err := keys.GenerateBLSKeyFiles(filepath.Join(n.Dir, blsSKeyName), filepath.Join(n.Dir, blsVKeyName))
	if err != nil {
		return n, consensus.Pool{}, fmt.Errorf("%s BLS key: %w", name, err)
	}
	pool := consensus.Pool{Name: name, IssuerVKey: hex.EncodeToString(issuer), VRFVKey: hex.EncodeToString(vrfKey[:])}
	pool.SetVotingKey(votingKey, proof)
	return n, pool, nil
}

// writeNodeConfig writes node i's config.json and its topology.json: every
// other node of the devnet, addressed by multiaddr (its own, or its link's
// proxy) and peer ID.
func writeNodeConfig(d *Layout, i int, logLevel string) error {
	n := d.Nodes[i]
	genesisRel, err := filepath.Rel(n.Dir, filepath.Join(d.Dir, genesisFileName))
	if err != nil {
		return err
	}
	cfg := config.Config{
		GenesisFile:   genesisRel,
		TopologyFile:  topologyFileName,
		DatabasePath:  databaseDirName,
		ListenAddrs:   []string{n.ListenAddr},
		HTTPAddr:      n.HTTPAddr,
		NodeKeyFile:   nodeKeyFileName,
		IssuerKeyFile: issuerSKeyName,
		VRFKeyFile:    vrfSKeyName,
		BLSKeyFile:    blsSKeyName,
		LogLevel:      logLevel,
	}
	if err := config.WriteJSON(n.ConfigFile, cfg); err != nil {
		return err
	}
	topo := config.Topology{Peers: []string{}}
	for j, p := range d.Nodes {
		if j != i {
			topo.Peers = append(topo.Peers, d.peerAddr(i, j)+"/p2p/"+p.PeerID.String())
		}
	}
	return config.WriteJSON(filepath.Join(n.Dir, topologyFileName), topo)
}

// peerAddr is the multiaddr (without /p2p) at which node from dials node
// to: to's listen address, or its link's proxy.
func (d *Layout) peerAddr(from, to int) string {
	for _, l := range d.Links {
		if l.From == from && l.To == to {
			host, port, _ := net.SplitHostPort(l.Addr) // Write spells it so
			return fmt.Sprintf("/ip4/%s/tcp/%s", host, port)
		}
	}
	return d.Nodes[to].ListenAddr
}

// tcpHostPort is the host:port of a /ip4/HOST/tcp/PORT multiaddr, as Write
// spells the nodes' listen addresses.
func tcpHostPort(addr string) (string, error) {
	parts := strings.Split(addr, "/")
	if len(parts) != 5 || parts[0] != "" || parts[1] != "ip4" || parts[3] != "tcp" {
		return "", fmt.Errorf("%q is not a /ip4/HOST/tcp/PORT address", addr)
	}
	return net.JoinHostPort(parts[2], parts[4]), nil
}

// devnetPorts returns count loopback ports: base, base+1, … when base is
// non-zero, else ports the OS reports free. The OS's ports are only free
// when asked, which is good enough for a devnet started right after.
func devnetPorts(base, count int) ([]int, error) {
	ports := make([]int, count)
	if base != 0 {
		if base < 1024 || base+count > 65536 {
			return nil, fmt.Errorf("base port %d: the range %d–%d is not usable", base, base, base+count-1)
		}
		for i := range ports {
			ports[i] = base + i
		}
		return ports, nil
	}
	// Hold every listener until all ports are known, so they are distinct.
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// randomNonce is a fresh epoch nonce (crypto/rand.Read never fails).
func randomNonce() string {
	var nonce [32]byte
	rand.Read(nonce[:])
	return hex.EncodeToString(nonce[:])
}
