package layout

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/keys/peerid"
)

func TestParseHost(t *testing.T) {
	for _, tt := range []struct {
		host, listen, dial, http string
	}{
		{"10.0.0.1:3001", "/ip4/10.0.0.1/tcp/3001", "", "10.0.0.1:3002"},
		{" 10.0.0.2 ", "/ip4/10.0.0.2/tcp/3001", "", "10.0.0.2:3002"},
		{"/ip4/10.0.0.3/tcp/4000", "/ip4/10.0.0.3/tcp/4000", "", "10.0.0.3:4001"},
		{"[fd00::1]:3001", "/ip6/fd00::1/tcp/3001", "", "[fd00::1]:3002"},
		{"fd00::2", "/ip6/fd00::2/tcp/3001", "", "[fd00::2]:3002"},
		{"/ip6/fd00::3/tcp/3005", "/ip6/fd00::3/tcp/3005", "", "[fd00::3]:3006"},
		{"::ffff:10.0.0.4", "/ip4/10.0.0.4/tcp/3001", "", "10.0.0.4:3002"},
		// libp2p cannot listen on a name: all addresses, dialed by name.
		{"node1.example.org:3001", "/ip4/0.0.0.0/tcp/3001", "/dns/node1.example.org/tcp/3001", ":3002"},
		{"/dns4/node2.example.org/tcp/3001", "/ip4/0.0.0.0/tcp/3001", "/dns/node2.example.org/tcp/3001", ":3002"},
	} {
		p, err := parseHost(tt.host)
		if tt.dial == "" {
			tt.dial = tt.listen
		}
		if err != nil || p != (nodePlace{listen: tt.listen, dial: tt.dial, http: tt.http}) {
			t.Errorf("parseHost(%q) = %+v, %v; want %s, %s, %s", tt.host, p, err, tt.listen, tt.dial, tt.http)
		}
	}
	for _, tt := range []struct{ host, wantErr string }{
		{"", "empty"},
		{"0.0.0.0:3001", "no address other hosts can dial"},
		{"[::]:3001", "no address other hosts can dial"},
		{"10.0.0.1:65535", "the HTTP API takes the next port"},
		{"10.0.0.1:0", "want 1–65534"},
		{"10.0.0.1:http", `port "http" is not a number`},
		{"/ip4/10.0.0.1/udp/3001", "want /ip4|ip6|dns/HOST/tcp/PORT"},
		{"/ip4/10.0.0.1/tcp/3001/p2p/12D3KooWLNcJHgT2VPRBzPxTZmkvrwMhPEHnV7BM1aaYxefoN3GP", "want /ip4|ip6|dns/HOST/tcp/PORT"},
		{"/ip4/10.0.0.300/tcp/3001", "10.0.0.300"},
	} {
		if _, err := parseHost(tt.host); err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.host) {
			t.Errorf("parseHost(%q): %v, want an error naming it and saying %q", tt.host, err, tt.wantErr)
		}
	}
}

// TestPlaceOnHostsClash: two nodes never listen on one port of one host,
// whether libp2p or HTTP, pool or relay.
func TestPlaceOnHostsClash(t *testing.T) {
	for _, tt := range []struct {
		pools, relays []string
		want          string
	}{
		{[]string{"10.0.0.1:3001", "10.0.0.1:3001"}, nil, "node-0 (libp2p) and node-1 (libp2p) would both listen on 10.0.0.1:3001"},
		{[]string{"10.0.0.1:3001", "10.0.0.1:3002"}, nil, "node-0 (HTTP) and node-1 (libp2p) would both listen on 10.0.0.1:3002"},
		{[]string{"10.0.0.1:3001"}, []string{"/ip4/10.0.0.1/tcp/3000"}, "node-0 (libp2p) and relay-0 (HTTP)"},
		{[]string{"n.example.org:3001"}, []string{"/dns/n.example.org/tcp/3002"}, "node-0 (HTTP) and relay-0 (libp2p) would both listen on n.example.org:3002"},
	} {
		if _, _, err := placeOnHosts(tt.pools, tt.relays); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %v: %v, want %q", tt.pools, tt.relays, err, tt.want)
		}
	}
	pools, relays, err := placeOnHosts([]string{"10.0.0.1:3001", "10.0.0.1:3003"}, []string{"10.0.0.1:3005"})
	if err != nil || len(pools) != 2 || len(relays) != 1 {
		t.Errorf("three nodes two ports apart on one host: %v", err)
	}
}

// TestWriteOnHosts: a network on several hosts puts each node at its
// host's address, names every other node there in its topology, gives
// relays a node key only, and makes each node's directory self-contained:
// moved alone elsewhere, its config still finds everything it names.
func TestWriteOnHosts(t *testing.T) {
	tmpl, err := LoadTemplate("../../../configs/testnet.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hosts := []string{"10.0.0.1:3001", "10.0.0.2:3001", "/ip4/10.0.0.3/tcp/4000"}
	relayHosts := []string{"10.0.0.9", "relay1.example.org:5000"}
	d, err := Write(Spec{Dir: dir, Nodes: 3, Funded: 1, Template: tmpl, SystemStart: time.Now(), Hosts: hosts, Relays: 2, RelayHosts: relayHosts})
	if err != nil {
		t.Fatal(err)
	}
	wantDial := []string{"/ip4/10.0.0.1/tcp/3001", "/ip4/10.0.0.2/tcp/3001", "/ip4/10.0.0.3/tcp/4000", "/ip4/10.0.0.9/tcp/3001", "/dns/relay1.example.org/tcp/5000"}
	wantListen := []string{"/ip4/10.0.0.1/tcp/3001", "/ip4/10.0.0.2/tcp/3001", "/ip4/10.0.0.3/tcp/4000", "/ip4/10.0.0.9/tcp/3001", "/ip4/0.0.0.0/tcp/5000"}
	wantHTTP := []string{"10.0.0.1:3002", "10.0.0.2:3002", "10.0.0.3:4001", "10.0.0.9:3002", ":5001"}
	all := append(slices.Clip(d.Nodes), d.Relays...)
	var p2pAddrs []string
	for _, n := range all {
		p2pAddrs = append(p2pAddrs, n.P2PAddr())
	}
	genesis, err := os.ReadFile(filepath.Join(dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := consensus.ReadGenesis(filepath.Join(dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g.SlotLengthMs != tmpl.SlotLengthMs || g.SecurityParam != tmpl.SecurityParam || len(g.Pools) != 3 {
		t.Errorf("genesis: slot %d ms, k %d, %d pools; want the testnet template's, 3 pools", g.SlotLengthMs, g.SecurityParam, len(g.Pools))
	}

	for i, n := range all {
		relay := i >= len(d.Nodes)
		// The node's directory, copied alone to its "host".
		host := filepath.Join(t.TempDir(), "srv", "leiosnode")
		if err := os.CopyFS(host, os.DirFS(n.Dir)); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(filepath.Join(host, "config.json"))
		if err != nil {
			t.Fatalf("%s: %v", n.Name, err)
		}
		for _, path := range []string{cfg.GenesisFile, cfg.TopologyFile, cfg.NodeKeyFile, cfg.IssuerKeyFile, cfg.VRFKeyFile, cfg.BLSKeyFile, cfg.DatabasePath} {
			if path != "" && !strings.HasPrefix(path, host+string(filepath.Separator)) {
				t.Errorf("%s names %s, outside its directory", n.Name, path)
			}
		}
		if copied, err := os.ReadFile(cfg.GenesisFile); err != nil || !bytes.Equal(copied, genesis) {
			t.Errorf("%s: its genesis is not the network's: %v", n.Name, err)
		}
		if !slices.Equal(cfg.ListenAddrs, []string{wantListen[i]}) || cfg.HTTPAddr != wantHTTP[i] || n.DialAddr != wantDial[i] {
			t.Errorf("%s listens on %v, HTTP %s, dialed at %s; want %s, %s, %s", n.Name, cfg.ListenAddrs, cfg.HTTPAddr, n.DialAddr, wantListen[i], wantHTTP[i], wantDial[i])
		}
		topo, err := config.ReadTopology(cfg.TopologyFile)
		if err != nil {
			t.Fatal(err)
		}
		// A pool knows the other pools and shares them; a relay knows the
		// first pool only and finds the rest through it.
		wantPeers, sharing := p2pAddrs[:1], false
		if !relay {
			wantPeers, sharing = slices.Delete(slices.Clone(p2pAddrs[:3]), i, i+1), true
		}
		if !slices.Equal(topo.Peers, wantPeers) {
			t.Errorf("%s's topology is %v, want %v", n.Name, topo.Peers, wantPeers)
		}
		if (cfg.PeerSharing != nil && *cfg.PeerSharing) != sharing || !cfg.SharesPeers() {
			t.Errorf("%s: peerSharing %v, want it written %v and the node to share", n.Name, cfg.PeerSharing, sharing)
		}
		nodeKey, err := keys.ReadSigningKey(cfg.NodeKeyFile, keys.Node)
		if err != nil {
			t.Fatal(err)
		}
		if id, err := peerid.Of(nodeKey.Public().(ed25519.PublicKey)); err != nil || id != n.PeerID {
			t.Errorf("%s: node key gives %s, the topologies say %s", n.Name, id, n.PeerID)
		}
		files, _ := os.ReadDir(host)
		var names []string
		for _, f := range files {
			names = append(names, f.Name())
		}
		want := []string{"bls.skey", "bls.vkey", "config.json", "genesis.json", "issuer.skey", "issuer.vkey", "node.skey", "topology.json", "vrf.skey", "vrf.vkey"}
		if relay {
			want = []string{"config.json", "genesis.json", "node.skey", "topology.json"}
			if cfg.IssuerKeyFile != "" || cfg.VRFKeyFile != "" || cfg.BLSKeyFile != "" {
				t.Errorf("%s is configured as a producer", n.Name)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s holds %v, want %v", n.Name, names, want)
		}
	}

	var out strings.Builder
	d.Print(&out)
	for _, want := range append(p2pAddrs, "network in "+dir+": 3 pools, 2 relays", "http://relay1.example.org:5001", "leiosnode run --config config.json") {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Print lacks %q:\n%s", want, out.String())
		}
	}
}

// TestWriteRelaysOnLoopback: relays of a devnet on loopback take ports of
// their own and share the network's genesis, as the pools do.
func TestWriteRelaysOnLoopback(t *testing.T) {
	tmpl, _ := LoadTemplate("")
	dir := t.TempDir()
	d, err := Write(Spec{Dir: dir, Nodes: 2, Template: tmpl, SystemStart: time.Now(), Relays: 1, BasePort: 42000})
	if err != nil {
		t.Fatal(err)
	}
	r := d.Relays[0]
	cfg, err := config.Load(r.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if r.ListenAddr != "/ip4/127.0.0.1/tcp/42004" || r.HTTPAddr != "127.0.0.1:42005" || cfg.GenesisFile != filepath.Join(dir, "genesis.json") || cfg.IssuerKeyFile != "" {
		t.Errorf("relay: %s, %s, genesis %s, issuer key %q", r.ListenAddr, r.HTTPAddr, cfg.GenesisFile, cfg.IssuerKeyFile)
	}
	topo, err := config.ReadTopology(filepath.Join(d.Nodes[0].Dir, "topology.json"))
	if err != nil || !slices.Equal(topo.Peers, []string{d.Nodes[1].P2PAddr()}) {
		t.Errorf("node-0's topology %v, %v; want node-1", topo, err)
	}
	if topo, err := config.ReadTopology(cfg.TopologyFile); err != nil || !slices.Equal(topo.Peers, []string{d.Nodes[0].P2PAddr()}) {
		t.Errorf("the relay's topology %v, %v; want node-0 alone", topo, err)
	}
}

func TestWriteRejects(t *testing.T) {
	tmpl, _ := LoadTemplate("")
	for _, tt := range []struct {
		name string
		spec Spec
		want string
	}{
		{"hosts for fewer pools", Spec{Nodes: 3, Hosts: []string{"10.0.0.1"}}, "1 hosts for 3 pools"},
		{"relays without their hosts", Spec{Nodes: 1, Hosts: []string{"10.0.0.1"}, Relays: 1}, "0 relay hosts for 1 relays"},
		{"relay hosts without hosts", Spec{Nodes: 1, RelayHosts: []string{"10.0.0.1"}}, "need the pools' hosts"},
		{"a base port on hosts", Spec{Nodes: 1, Hosts: []string{"10.0.0.1"}, BasePort: 4000}, "base port"},
		{"proxies with relays", Spec{Nodes: 2, Relays: 1, ProxyLinks: true}, "link proxies"},
		{"negative relays", Spec{Nodes: 1, Relays: -1}, "relays: -1"},
		{"a bad host", Spec{Nodes: 1, Hosts: []string{"0.0.0.0"}}, "no address other hosts can dial"},
	} {
		dir := t.TempDir()
		tt.spec.Dir, tt.spec.Template, tt.spec.SystemStart = dir, tmpl, time.Now()
		if _, err := Write(tt.spec); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
		if files, _ := os.ReadDir(dir); len(files) > 0 {
			t.Errorf("%s: wrote %d files before refusing", tt.name, len(files))
		}
	}
}
