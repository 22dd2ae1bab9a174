package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
)

// TestGenesisOnHosts: --hosts-file and --relay-hosts decide how many
// pools and relays there are, and where each listens; the testnet
// template is the one given.
func TestGenesisOnHosts(t *testing.T) {
	dir := t.TempDir()
	hostsFile := filepath.Join(dir, "hosts")
	os.WriteFile(hostsFile, []byte("# the pools\n10.0.0.1:3001\n\n10.0.0.2:3001  # node-1\n/ip4/10.0.0.3/tcp/3001\n"), 0o644)
	net := filepath.Join(dir, "testnet")
	out, err := execute(context.Background(), "genesis", "--dir", net, "--template", "../../configs/testnet.json",
		"--hosts-file", hostsFile, "--relay-hosts", "10.0.0.4:3001")
	if err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	g, err := consensus.ReadGenesis(filepath.Join(net, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Pools) != 3 || g.SlotLengthMs != 1000 {
		t.Errorf("%d pools, slot %d ms; want 3 pools of the testnet template", len(g.Pools), g.SlotLengthMs)
	}
	for i, name := range []string{"node-0", "node-1", "node-2", "relay-0"} {
		cfg, err := config.Load(filepath.Join(net, name, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		host := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}[i]
		if !slices.Equal(cfg.ListenAddrs, []string{"/ip4/" + host + "/tcp/3001"}) || cfg.HTTPAddr != host+":3002" || cfg.GenesisFile != filepath.Join(net, name, "genesis.json") {
			t.Errorf("%s: %v, %s, %s", name, cfg.ListenAddrs, cfg.HTTPAddr, cfg.GenesisFile)
		}
		if (name == "relay-0") != (cfg.IssuerKeyFile == "") {
			t.Errorf("%s: issuer key %q", name, cfg.IssuerKeyFile)
		}
	}
	if !strings.Contains(out, "network in "+net+": 3 pools, 1 relays") {
		t.Errorf("genesis said:\n%s", out)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--hosts", "10.0.0.1", "--hosts-file", hostsFile}, "not both"},
		{[]string{"--hosts", "10.0.0.1", "--nodes", "2"}, "1 hosts for 2 pools"},
		{[]string{"--hosts", "10.0.0.1", "--relays", "1"}, "0 relay hosts for 1 relays"},
		{[]string{"--hosts", "10.0.0.1", "--relays", "2", "--relay-hosts", "10.0.0.2"}, "1 relay hosts for 2 relays"},
		{[]string{"--hosts-file", filepath.Join(dir, "none")}, "--hosts-file: open"},
		{[]string{"--hosts-file", filepath.Join(dir, "empty")}, "no hosts in it"},
	} {
		os.WriteFile(filepath.Join(dir, "empty"), []byte("# nothing yet\n"), 0o644)
		args := append([]string{"genesis", "--dir", filepath.Join(t.TempDir(), "net")}, tt.args...)
		if _, err := execute(context.Background(), args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want an error saying %q", tt.args, err, tt.want)
		}
	}
}
