package layout

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/freeport"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/keys/peerid"
	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// The files of a generated devnet. Paths inside a node's config are
// relative to the node's directory, so a devnet directory can be moved, and
// a node's directory of a devnet on several hosts copied to its host.
const (
	genesisFileName  = "genesis.json"
	FundsDirName     = "funds"
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
	NodeLogFileName  = "node.log"
	// TraceFileName is each node's trace, with Spec.Trace.
	TraceFileName = "trace.jsonl"
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
	// the HTTP port BasePort+2i+1 (the relays follow the pools); zero lets
	// the OS pick free ports. Loopback only: not with Hosts.
	BasePort int
	// Hosts, when set, lays out a network on several hosts instead of
	// loopback: pool i listens on Hosts[i] (see parseHost: a multiaddr,
	// host:port or a bare host) and serves HTTP on the same host at the
	// next port, and each node's directory holds a copy of the genesis, so
	// that it can be copied to its host as it is. One per pool: Nodes must
	// be len(Hosts).
	Hosts []string
	// Relays is the number of relays, DIR/relay-j/: nodes with a node key
	// only, which forge and vote on nothing. Every node's topology names
	// every other pool and relay.
	Relays int
	// RelayHosts are the relays' hosts, one per relay, as Hosts; required
	// with Hosts and Relays, not allowed without Hosts (relays on loopback
	// take ports after the pools').
	RelayHosts []string
	// LogLevel goes into every node's config ("" = the node's default).
	LogLevel string
	// Protocols are the Leios mini-protocol sets the pools serve and speak
	// (their configs' leiosProtocols): one set for all, both by default,
	// or mixed. Relays speak both.
	Protocols Protocols
	// Trace has every node write its events in the Leios simulators' trace
	// format to TraceFileName in its directory (the config's traceFile).
	Trace bool
	// ProxyLinks routes every link through the supervisor: node i's
	// topology names, for each peer j, a port the supervisor forwards to
	// j's libp2p port (see Link), so that the chaos mode can cut links.
	// The ports follow the nodes' (from BasePort+2·Nodes when BasePort is
	// set).
	ProxyLinks bool
	// Topology, when set, is the network to lay out (the Leios simulators'
	// format, see ReadTopology): its Nodes nodes of most stake (Top), the
	// pools' stakes in its proportions (Topology.Stakes), and each pool's
	// peers only the nodes it shares a link with; with ProxyLinks, the
	// proxies of those links only, shaped as the file says.
	Topology *Topology
	// LinkShape shapes every proxied link (ProxyLinks), both ways; with a
	// Topology, its non-zero latency or bandwidth replaces the file's.
	LinkShape LinkShape
}

// Layout is the devnet Write wrote: where its files are, its genesis and
// its nodes.
type Layout struct {
	Dir     string // absolute
	Genesis *consensus.Genesis
	Nodes   []Node // the pools' nodes
	Relays  []Node
	// OnHosts: a network on several hosts (Spec.Hosts), each node's
	// directory with its own copy of the genesis.
	OnHosts bool
	// Links are the proxied links, when Spec.ProxyLinks asked for them:
	// node From's topology names To at Addr. Every link has its reverse
	// (To dials From through a proxy of its own).
	Links []Link
	// Topology is the topology the devnet was laid out from (its kept
	// nodes, in the devnet's order), nil without Spec.Topology.
	Topology *Topology
	// Trace: every node writes a trace (Spec.Trace).
	Trace bool
	// Protocols: Spec.Protocols.
	Protocols Protocols
}

// Link is one directed link of a devnet whose links go through the
// supervisor: node From dials node To at Addr, a TCP proxy the supervisor
// runs, which forwards to To's libp2p port. The libp2p handshake runs end
// to end through it, so the peer IDs are those of the real nodes.
//
// Shape is what the link does to the bytes From sends To, whichever of
// the pair dialed the connection that carries them: the reverse Link's
// Shape is that of the bytes back.
type Link struct {
	From, To int
	Addr     string // host:port the proxy listens on
	Shape    LinkShape
}

// Node is one node of a devnet.
type Node struct {
	Name string // node-i, also its pool's name; relay-j for a relay
	// TopologyName is its node's name in Spec.Topology, "" without one.
	TopologyName string
	Dir          string // absolute
	ConfigFile   string // absolute
	PeerID       peer.ID
	ListenAddr   string // libp2p multiaddr, without /p2p
	// DialAddr is where the other nodes dial it, without /p2p: ListenAddr,
	// or its host's name when the node listens on all of its addresses.
	DialAddr string
	HTTPAddr string // host:port of GET /status
}

// Write generates a devnet: DIR/genesis.json, DIR/funds/ with the
// payment keys of the funded addresses, per pool DIR/node-i/ with its
// keys, config.json and topology.json, and per relay DIR/relay-j/ with its
// node key, config.json and topology.json (a full mesh of pools and
// relays).
func Write(spec Spec) (*Layout, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, genesisFileName)); err == nil {
		return nil, fmt.Errorf("%s already holds a devnet (genesis.json exists)", dir)
	}
	var topology *Topology
	if spec.Topology != nil {
		if topology, err = spec.Topology.Top(spec.Nodes); err != nil {
			return nil, err
		}
	}
	links := spec.links(topology)
	poolPlaces, relayPlaces, proxyPorts, err := spec.places(len(links))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, FundsDirName), 0o755); err != nil {
		return nil, err
	}

	g := spec.Template.Genesis()
	g.SystemStart = spec.SystemStart.UTC().Truncate(time.Millisecond)
	g.EpochNonce = randomNonce()
	d := &Layout{Dir: dir, Genesis: g, OnHosts: len(spec.Hosts) > 0, Trace: spec.Trace, Protocols: spec.Protocols, Topology: topology}
	var stakes []uint64
	if topology != nil {
		stakes = topology.Stakes(spec.Template.PoolStake)
	}
	for i, place := range poolPlaces {
		n, pool, err := writeNodeKeys(dir, i)
		if err != nil {
			return nil, err
		}
		pool.Stake = spec.Template.PoolStake
		if topology != nil {
			pool.Stake, n.TopologyName = stakes[i], topology.Nodes[i].Name
		}
		n.ListenAddr, n.DialAddr, n.HTTPAddr = place.listen, place.dial, place.http
		g.Pools = append(g.Pools, pool)
		d.Nodes = append(d.Nodes, n)
	}
	for j, place := range relayPlaces {
		r, err := writeNodeIdentity(dir, fmt.Sprintf("relay-%d", j))
		if err != nil {
			return nil, err
		}
		r.ListenAddr, r.DialAddr, r.HTTPAddr = place.listen, place.dial, place.http
		d.Relays = append(d.Relays, r)
	}
	for i, l := range links {
		l.Addr = fmt.Sprintf("127.0.0.1:%d", proxyPorts[i])
		d.Links = append(d.Links, l)
	}
	for i := range spec.Funded {
		addr, err := keys.GeneratePaymentKeyFiles(filepath.Join(dir, FundsDirName, fmt.Sprintf("payment-%d", i)), g.NetworkID)
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
		if err := d.writeNodeConfig(n, true, d.Protocols.Of(i), d.poolTopology(i), spec.LogLevel); err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	for j, r := range d.Relays {
		if err := d.writeNodeConfig(r, false, protocolset.Both, d.relayTopology(j), spec.LogLevel); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
	}
	return d, nil
}

// check refuses a Spec Write cannot lay out, before anything is written.
func (spec Spec) check() error {
	switch {
	case spec.Nodes < 1:
		return fmt.Errorf("a devnet needs at least one node, not %d", spec.Nodes)
	case spec.Funded < 0:
		return fmt.Errorf("funded addresses: %d is negative", spec.Funded)
	case !spec.Protocols.Mixed && !slices.Contains(protocolset.All(), spec.Protocols.Set):
		return fmt.Errorf("protocols: %v is no Leios protocol set", spec.Protocols.Set)
	case spec.Relays < 0:
		return fmt.Errorf("relays: %d is negative", spec.Relays)
	case spec.ProxyLinks && (spec.Relays > 0 || len(spec.Hosts) > 0):
		return errors.New("link proxies are the local devnet's: not with relays or hosts")
	case !spec.LinkShape.IsZero() && !spec.ProxyLinks:
		return errors.New("a link's latency or bandwidth is emulated by the link proxies: lay them out too (ProxyLinks)")
	case spec.LinkShape.Latency < 0 || spec.LinkShape.BytesPerSecond < 0:
		return fmt.Errorf("link shape %v: latency and bandwidth must not be negative", spec.LinkShape)
	case spec.Topology != nil && (spec.Relays > 0 || len(spec.Hosts) > 0):
		return errors.New("a topology file lays out the local devnet's pools: not with relays or hosts")
	case len(spec.Hosts) == 0 && len(spec.RelayHosts) > 0:
		return errors.New("relay hosts need the pools' hosts too (--hosts)")
	case len(spec.Hosts) == 0:
		return nil
	case len(spec.Hosts) != spec.Nodes:
		return fmt.Errorf("%d hosts for %d pools: give one host per pool", len(spec.Hosts), spec.Nodes)
	case len(spec.RelayHosts) != spec.Relays:
		return fmt.Errorf("%d relay hosts for %d relays: give one host per relay (--relay-hosts)", len(spec.RelayHosts), spec.Relays)
	case spec.BasePort != 0:
		return errors.New("a base port is for a devnet on loopback: on several hosts each host gives its node's port")
	}
	return nil
}

// links are the proxied links (without their addresses), when
// Spec.ProxyLinks asks for them: both ways of every pair of the topology,
// or of every pair of pools without one. A pair is dialed both ways, each
// side through its own proxy, so that either side redials a dropped
// connection through the lab; the bytes each way are shaped alike
// whichever proxy carries them (Link).
func (spec Spec) links(topology *Topology) []Link {
	if !spec.ProxyLinks {
		return nil
	}
	var links []Link
	add := func(a, b int, forward, back LinkShape) {
		links = append(links, Link{From: a, To: b, Shape: spec.LinkShape.over(forward)}, Link{From: b, To: a, Shape: spec.LinkShape.over(back)})
	}
	if topology != nil {
		for _, p := range topology.pairs() {
			add(p.a, p.b, p.forward, p.back)
		}
		return links
	}
	for a := range spec.Nodes {
		for b := a + 1; b < spec.Nodes; b++ {
			add(a, b, LinkShape{}, LinkShape{})
		}
	}
	return links
}

// over is s's non-zero latency and bandwidth over base's.
func (s LinkShape) over(base LinkShape) LinkShape {
	if s.Latency > 0 {
		base.Latency = s.Latency
	}
	if s.BytesPerSecond > 0 {
		base.BytesPerSecond = s.BytesPerSecond
	}
	return base
}

// places are where the pools and the relays listen, on their hosts or on
// loopback ports, and the loopback ports of the proxies of so many links.
func (spec Spec) places(proxies int) (pools, relays []nodePlace, proxyPorts []int, err error) {
	if len(spec.Hosts) > 0 {
		pools, relays, err = placeOnHosts(spec.Hosts, spec.RelayHosts)
		return pools, relays, nil, err
	}
	nodes := spec.Nodes + spec.Relays
	// One call, so that the free ports the OS gives are all distinct.
	ports, err := devnetPorts(spec.BasePort, 2*nodes+proxies)
	if err != nil {
		return nil, nil, nil, err
	}
	places := make([]nodePlace, nodes)
	for i := range places {
		places[i] = nodePlace{
			listen: fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", ports[2*i]),
			http:   fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]),
		}
		places[i].dial = places[i].listen
	}
	return places[:spec.Nodes], places[spec.Nodes:], ports[2*nodes:], nil
}

// Print tells the user what was written and how to reach each node; for
// a network on several hosts, also what to copy where.
func (d *Layout) Print(w io.Writer) {
	g := d.Genesis
	kind := "devnet"
	if d.OnHosts {
		kind = "network"
	}
	relays := ""
	if len(d.Relays) > 0 {
		relays = fmt.Sprintf(", %d relays", len(d.Relays))
	}
	fmt.Fprintf(w, "%s in %s: %d pools%s, %d funded addresses, system start %s, slot %d ms, f %s, k %d\n",
		kind, d.Dir, len(g.Pools), relays, len(g.InitialFunds), g.SystemStart.Format(time.RFC3339Nano), g.SlotLengthMs, g.ActiveSlotsCoeff, g.SecurityParam)
	for _, n := range append(slices.Clip(d.Nodes), d.Relays...) {
		fmt.Fprintf(w, "  %-8s %s  %s\n", n.Name, n.P2PAddr(), n.APIURL())
	}
	if d.Topology != nil {
		var renamed []string
		for _, n := range d.Nodes {
			if n.Name != n.TopologyName {
				renamed = append(renamed, n.Name+"="+n.TopologyName)
			}
		}
		names := "under the file's names"
		if len(renamed) > 0 {
			names = strings.Join(renamed, " ")
		}
		fmt.Fprintf(w, "  the pools are the %d nodes of most stake of %s, with its stakes' proportions: %s\n", len(d.Nodes), d.Topology.File, names)
	}
	if len(d.Links) > 0 {
		fmt.Fprintf(w, "  the nodes dial one another through %d link proxies of this devnet (e.g. %s dials %s at %s), which can cut them%s\n",
			len(d.Links), d.Nodes[d.Links[0].From].Name, d.Nodes[d.Links[0].To].Name, d.Links[0].Addr, d.linkShapes())
	}
	if d.OnHosts {
		fmt.Fprintf(w, "copy each node's directory (%s/node-0, …) whole to its host, and there run: leiosnode run --config config.json\n", d.Dir)
		fmt.Fprintf(w, "the payment keys of the funded addresses are in %s/%s: keep them off the hosts\n", d.Dir, FundsDirName)
	}
}

// writeNodeKeys creates DIR/node-i/ and its node, issuer, VRF and BLS
// voting keys, and returns the node and its pool (without stake).
func writeNodeKeys(dir string, i int) (Node, consensus.Pool, error) {
	n, err := writeNodeIdentity(dir, fmt.Sprintf("node-%d", i))
	if err != nil {
		return n, consensus.Pool{}, err
	}
	name := n.Name
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

// writeNodeIdentity creates DIR/name/ and the node key that gives the
// node its peer ID: all a relay holds, no pool, VRF or BLS key.
func writeNodeIdentity(dir, name string) (Node, error) {
	n := Node{Name: name, Dir: filepath.Join(dir, name)}
	n.ConfigFile = filepath.Join(n.Dir, configFileName)
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return n, err
	}
	nodeKey, err := keys.GenerateKeyFiles(keys.Node, filepath.Join(n.Dir, nodeKeyFileName), "")
	if err != nil {
		return n, fmt.Errorf("%s node key: %w", name, err)
	}
	if n.PeerID, err = peerid.Of(nodeKey); err != nil {
		return n, fmt.Errorf("%s peer id: %w", name, err)
	}
	return n, nil
}

// writeNodeConfig writes a node's config.json (a producer's with its pool
// keys, a relay's without; either with the Leios protocols it speaks) and
// its topology.json of peers. On several hosts the node's directory gets
// its own copy of the genesis.
func (d *Layout) writeNodeConfig(n Node, producer bool, protocols protocolset.Set, peers []string, logLevel string) error {
	genesisFile, err := filepath.Rel(n.Dir, filepath.Join(d.Dir, genesisFileName))
	if err != nil {
		return err
	}
	if d.OnHosts {
		genesisFile = genesisFileName
		if err := copyFile(filepath.Join(d.Dir, genesisFileName), filepath.Join(n.Dir, genesisFileName)); err != nil {
			return err
		}
	}
	cfg := config.Config{
		GenesisFile:  genesisFile,
		TopologyFile: topologyFileName,
		DatabasePath: databaseDirName,
		ListenAddrs:  []string{n.ListenAddr},
		HTTPAddr:     n.HTTPAddr,
		NodeKeyFile:  nodeKeyFileName,
		LogLevel:     logLevel,
		// On loopback nothing else reaches the API: profiles on, for the
		// benchmarks and whoever watches the devnet.
		Pprof: !d.OnHosts,
	}
	if d.Trace {
		cfg.TraceFile = TraceFileName
	}
	cfg.LeiosProtocols = protocols // both, the default, is left out of the file
	if producer {
		cfg.IssuerKeyFile, cfg.VRFKeyFile, cfg.BLSKeyFile = issuerSKeyName, vrfSKeyName, blsSKeyName
	}
	if producer && len(d.Relays) > 0 {
		// The relays know one pool and learn the rest from it: pools on
		// their own hosts are reachable anyway, so sharing them hides
		// nothing (a pool kept behind relays would say false).
		sharing := true
		cfg.PeerSharing = &sharing
	}
	if err := config.WriteJSON(n.ConfigFile, cfg); err != nil {
		return err
	}
	return config.WriteJSON(filepath.Join(n.Dir, topologyFileName), config.Topology{Peers: peers})
}

// poolTopology is pool i's peers: every other pool, or with a topology
// those it shares a link with, at its own address or its link's proxy.
// The pools do not know the relays: a relay dials them.
func (d *Layout) poolTopology(i int) []string {
	peers := []string{}
	for j, p := range d.Nodes {
		if j != i && d.linked(i, j) {
			peers = append(peers, d.peerAddr(i, j)+"/p2p/"+p.PeerID.String())
		}
	}
	return peers
}

// linked says pools i and j are peers: always, unless the topology has no
// link between them.
func (d *Layout) linked(i, j int) bool {
	if d.Topology == nil {
		return true
	}
	_, ij := d.Topology.Nodes[j].Producers[d.Topology.Nodes[i].Name]
	_, ji := d.Topology.Nodes[i].Producers[d.Topology.Nodes[j].Name]
	return ij || ji
}

// relayTopology is relay j's peers: one bootstrap address, the first
// pool's, as a relay joining a testnet knows it. Peer sharing finds the
// other pools and relays through it.
func (d *Layout) relayTopology(int) []string {
	return []string{d.Nodes[0].P2PAddr()}
}

// P2PAddr is the address other nodes' topologies name the node by: where
// they dial it, and its peer ID.
func (n Node) P2PAddr() string { return n.DialAddr + "/p2p/" + n.PeerID.String() }

// APIURL is the base URL of the node's HTTP API, as the status and
// submit commands take it: at its HTTP address, or its host's name when
// it listens on all addresses.
func (n Node) APIURL() string {
	if port, ok := strings.CutPrefix(n.HTTPAddr, ":"); ok {
		if hostPort, err := TCPHostPort(n.DialAddr); err == nil {
			host, _, _ := net.SplitHostPort(hostPort)
			return "http://" + net.JoinHostPort(host, port)
		}
	}
	return "http://" + n.HTTPAddr
}

// copyFile copies a generated file into a node's directory.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
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
	return d.Nodes[to].DialAddr
}

// TCPHostPort is the host:port of a /ip4|ip6|dns/HOST/tcp/PORT multiaddr,
// as Write spells the nodes' listen addresses.
func TCPHostPort(addr string) (string, error) {
	parts := strings.Split(addr, "/")
	if len(parts) != 5 || parts[0] != "" || !slices.Contains([]string{"ip4", "ip6", "dns", "dns4", "dns6"}, parts[1]) || parts[3] != "tcp" {
		return "", fmt.Errorf("%q is not a /ip4|ip6|dns/HOST/tcp/PORT address", addr)
	}
	return net.JoinHostPort(parts[2], parts[4]), nil
}

// devnetPorts returns count loopback ports: base, base+1, … when base is
// non-zero, else ports free when asked and outside the range the kernel
// gives outgoing connections, so that none of the nodes' dials takes one
// before its node binds it.
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
	ports, err := freeport.Ports(count)
	if err != nil {
		return nil, err
	}
	return ports, nil
}

// randomNonce is a fresh epoch nonce (crypto/rand.Read never fails).
func randomNonce() string {
	var nonce [32]byte
	rand.Read(nonce[:])
	return hex.EncodeToString(nonce[:])
}

// linkShapes says how the proxies shape the links, "" when they do not.
func (d *Layout) linkShapes() string {
	var shapes []LinkShape
	for _, l := range d.Links {
		if !l.Shape.IsZero() {
			shapes = append(shapes, l.Shape)
		}
	}
	if len(shapes) == 0 {
		return ""
	}
	lat := func(s LinkShape) time.Duration { return s.Latency }
	bw := func(s LinkShape) int64 { return s.BytesPerSecond }
	lo, hi := slices.MinFunc(shapes, byFunc(lat)), slices.MaxFunc(shapes, byFunc(lat))
	slow, fast := slices.MinFunc(shapes, byFunc(bw)), slices.MaxFunc(shapes, byFunc(bw))
	if lo.Latency == hi.Latency && slow.BytesPerSecond == fast.BytesPerSecond {
		return fmt.Sprintf(", and emulate each one way as %v", lo)
	}
	return fmt.Sprintf(", and emulate them one way: latency %v–%v, bandwidth %s–%s", lo.Latency, hi.Latency, rateString(slow.BytesPerSecond), rateString(fast.BytesPerSecond))
}

func byFunc[T any, K cmp.Ordered](key func(T) K) func(a, b T) int {
	return func(a, b T) int { return cmp.Compare(key(a), key(b)) }
}

// rateString is bytes/s in Mbit/s, or "unlimited".
func rateString(bytesPerSecond int64) string {
	if bytesPerSecond == 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%.3g Mbit/s", float64(bytesPerSecond)*8/1e6)
}

// String names the link and its shape, for messages.
func (l Link) String() string { return fmt.Sprintf("%d→%d %v", l.From, l.To, l.Shape) }
