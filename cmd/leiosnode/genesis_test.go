package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/keys/peerid"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestGenesisFiles: what genesis writes is accepted by the readers the node
// uses, and the pieces fit together: pools are the nodes' keys, funds are
// the payment keys' addresses, topologies name the other nodes' peer IDs.
func TestGenesisFiles(t *testing.T) {
	dir := t.TempDir()
	before := time.Now()
	out, err := execute(context.Background(), "genesis", "--dir", dir, "--nodes", "4", "--funded", "3", "--start-delay", "5s")
	if err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}

	g, err := consensus.ReadGenesis(filepath.Join(dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	committee, err := consensus.NewCommittee(g)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _ := layout.LoadTemplate("")
	if len(g.Pools) != 4 || len(g.InitialFunds) != 3 {
		t.Fatalf("%d pools, %d funded addresses; want 4 and 3", len(g.Pools), len(g.InitialFunds))
	}
	if g.SlotLengthMs != tmpl.SlotLengthMs || g.ActiveSlotsCoeff != tmpl.ActiveSlotsCoeff || g.SecurityParam != tmpl.SecurityParam ||
		g.ProtocolParams != tmpl.ProtocolParams || g.Leios != tmpl.Leios {
		t.Errorf("genesis parameters differ from the template")
	}
	// A new network is the CIP's, and says so in its file: a genesis that
	// names no encoding is read as the prototype's.
	if written, err := os.ReadFile(filepath.Join(dir, "genesis.json")); err != nil || g.Leios.Encoding != block.EncodingCIP ||
		!bytes.Contains(written, []byte(`"encoding": "cip"`)) {
		t.Errorf("the genesis's encoding is %s, or not written as \"cip\" (%v)", g.Leios.Encoding, err)
	}
	if start := g.SystemStart.Sub(before); start < 4*time.Second || start > 6*time.Second {
		t.Errorf("system start is %v after the command started, want about 5s", start)
	}

	// Funds: every payment key's enterprise address holds the template's amount.
	for i := range 3 {
		prefix := filepath.Join(dir, "funds", fmt.Sprintf("payment-%d", i))
		skey, err := keys.ReadSigningKey(prefix+".skey", keys.Payment)
		if err != nil {
			t.Fatal(err)
		}
		vkey, err := keys.ReadVerificationKey(prefix+".vkey", keys.Payment)
		if err != nil {
			t.Fatal(err)
		}
		if !vkey.Equal(skey.Public()) {
			t.Errorf("payment-%d: vkey file is not the skey's", i)
		}
		addr, _ := keys.EnterpriseAddress(vkey, g.NetworkID)
		addrFile, _ := os.ReadFile(prefix + ".addr")
		if strings.TrimSpace(string(addrFile)) != ledger.FormatAddress(addr) {
			t.Errorf("payment-%d.addr is %q, want %s", i, addrFile, ledger.FormatAddress(addr))
		}
		if coin := g.InitialFunds[hex.EncodeToString(addr)]; coin != tmpl.FundsPerAddress {
			t.Errorf("payment-%d holds %d, want %d", i, coin, tmpl.FundsPerAddress)
		}
	}

	// Nodes: configs load, keys are the pools', peer IDs are the topologies'.
	peerIDs := map[string]peer.ID{} // listen multiaddr → peer ID of its node
	ports := map[string]bool{}
	var topologies [][]string
	var ownAddrs []string
	for i, pool := range g.Pools {
		name := fmt.Sprintf("node-%d", i)
		cfg, err := config.Load(filepath.Join(dir, name, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		if pool.Name != name || pool.Stake != tmpl.PoolStake {
			t.Errorf("pool %d is %q with stake %d", i, pool.Name, pool.Stake)
		}
		if cfg.GenesisFile != filepath.Join(dir, "genesis.json") || cfg.DatabasePath != filepath.Join(dir, name, "db") {
			t.Errorf("%s: genesis %s, database %s", name, cfg.GenesisFile, cfg.DatabasePath)
		}
		issuer, err := keys.ReadSigningKey(cfg.IssuerKeyFile, keys.StakePool)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(issuer.Public().(ed25519.PublicKey)); got != pool.IssuerVKey {
			t.Errorf("%s: issuer key %s, pool's %s", name, got, pool.IssuerVKey)
		}
		vrfKey, err := keys.ReadVRFSigningKey(cfg.VRFKeyFile)
		if err != nil {
			t.Fatal(err)
		}
		if pub := vrfKey.Public(); hex.EncodeToString(pub[:]) != pool.VRFVKey {
			t.Errorf("%s: VRF key %x, pool's %s", name, pub, pool.VRFVKey)
		}
		// The node's voting key is its pool's, and holds the pool's seat.
		blsKey, err := keys.ReadBLSSigningKey(cfg.BLSKeyFile)
		if err != nil {
			t.Fatal(err)
		}
		voter, err := committee.NewVoter(block.Bytes32(issuer.Public().(ed25519.PublicKey)), blsKey)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if seat, _ := committee.Seat(voter.Seat()); seat.Pool != name {
			t.Errorf("%s votes in seat %d, which is %s's", name, voter.Seat(), seat.Pool)
		}
		nodeKey, err := keys.ReadSigningKey(cfg.NodeKeyFile, keys.Node)
		if err != nil {
			t.Fatal(err)
		}
		id, err := peerid.Of(nodeKey.Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.ListenAddrs) != 1 {
			t.Fatalf("%s listens on %v", name, cfg.ListenAddrs)
		}
		peerIDs[cfg.ListenAddrs[0]] = id
		ownAddrs = append(ownAddrs, cfg.ListenAddrs[0])
		for _, a := range []string{cfg.ListenAddrs[0], cfg.HTTPAddr} {
			port := a[strings.LastIndexAny(a, ":/")+1:]
			if ports[port] {
				t.Errorf("port %s is used twice", port)
			}
			ports[port] = true
		}
		if !strings.HasPrefix(cfg.HTTPAddr, "127.0.0.1:") || !strings.HasPrefix(cfg.ListenAddrs[0], "/ip4/127.0.0.1/tcp/") {
			t.Errorf("%s is not on loopback: %s, %s", name, cfg.ListenAddrs[0], cfg.HTTPAddr)
		}
		topo, err := config.ReadTopology(cfg.TopologyFile)
		if err != nil {
			t.Fatal(err)
		}
		topologies = append(topologies, topo.Peers)
	}
	for i, peers := range topologies {
		if len(peers) != len(g.Pools)-1 {
			t.Errorf("node-%d has %d peers, want a full mesh", i, len(peers))
		}
		for _, p := range peers {
			ma, err := multiaddr.NewMultiaddr(p)
			if err != nil {
				t.Fatal(err)
			}
			info, err := peer.AddrInfoFromP2pAddr(ma)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := peerIDs[info.Addrs[0].String()]
			switch {
			case !ok:
				t.Errorf("node-%d: peer %s is no node's address", i, p)
			case want != info.ID:
				t.Errorf("node-%d: peer %s, but that node's key gives peer ID %s", i, p, want)
			case info.Addrs[0].String() == ownAddrs[i]:
				t.Errorf("node-%d lists itself", i)
			}
		}
	}
}

// TestGenesisFlags: the overrides replace the template's values, the base
// port lays the ports out in order, and an existing devnet is never
// overwritten.
func TestGenesisFlags(t *testing.T) {
	dir := t.TempDir()
	args := []string{"genesis", "--dir", dir, "--nodes", "2", "--funded", "0", "--base-port", "41000",
		"--slot-length-ms", "250", "--active-slots-coeff", "0.25", "--security-param", "3", "--log-level", "debug",
		"--template", "../../configs/testnet.json"}
	if out, err := execute(context.Background(), args...); err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	g, err := consensus.ReadGenesis(filepath.Join(dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g.SlotLengthMs != 250 || g.ActiveSlotsCoeff != "0.25" || g.SecurityParam != 3 || len(g.InitialFunds) != 0 {
		t.Errorf("slot %d ms, f %s, k %d, %d funded; want the overrides", g.SlotLengthMs, g.ActiveSlotsCoeff, g.SecurityParam, len(g.InitialFunds))
	}
	if g.MaxClockSkewMs != 2000 {
		t.Errorf("maxClockSkewMs %d, want the testnet template's 2000", g.MaxClockSkewMs)
	}
	for i := range 2 {
		cfg, err := config.Load(filepath.Join(dir, fmt.Sprintf("node-%d", i), "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		wantListen, wantHTTP := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", 41000+2*i), fmt.Sprintf("127.0.0.1:%d", 41001+2*i)
		if cfg.ListenAddrs[0] != wantListen || cfg.HTTPAddr != wantHTTP || cfg.LogLevel != "debug" {
			t.Errorf("node-%d: %s, %s, log %q; want %s, %s, debug", i, cfg.ListenAddrs[0], cfg.HTTPAddr, cfg.LogLevel, wantListen, wantHTTP)
		}
	}

	if _, err := execute(context.Background(), "genesis", "--dir", dir); err == nil || !strings.Contains(err.Error(), "already holds a devnet") {
		t.Errorf("a second genesis into the same dir: %v", err)
	}
}

func TestGenesisRejects(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no dir", []string{"genesis"}, `"dir" not set`},
		{"no nodes", []string{"--nodes", "0"}, "at least one node"},
		{"bad f", []string{"--active-slots-coeff", "1.5"}, "activeSlotsCoeff"},
		{"bad k", []string{"--security-param", "0"}, "securityParam"},
		{"missing template", []string{"--template", "no-such.json"}, "no-such.json"},
		{"low base port", []string{"--base-port", "80"}, "not usable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.name != "no dir" {
				args = append([]string{"genesis", "--dir", t.TempDir()}, args...)
			}
			_, err := execute(context.Background(), args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDevnetRejects(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--duration", "-5s"}, "--duration -5s: must not be negative"},
		{[]string{"--tx-rate", "-5"}, "--tx-rate -5: must be a finite number"},
		{[]string{"--tx-rate", "NaN"}, "--tx-rate NaN"},
		{[]string{"--start-delay", "-1s"}, "--start-delay -1s"},
		{[]string{"--nodes", "0"}, "at least one node"},
		{[]string{"--chaos", "kill=soon"}, "kill=soon"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "devnet")
			_, err := execute(context.Background(), append([]string{"devnet", "--dir", dir}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
