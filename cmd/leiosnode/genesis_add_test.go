package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/config"
)

// TestGenesisAdd: a relay added to a loopback devnet gets its own
// directory, a config on the host given and a topology naming the first
// pool as the others name it; a second one is relay-1; what cannot be
// added is refused in one line saying why.
func TestGenesisAdd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "net")
	if out, err := execute(context.Background(), "genesis", "--dir", dir, "--nodes", "2", "--funded", "0"); err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	pool1, err := config.ReadTopology(filepath.Join(dir, "node-1", "topology.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := execute(context.Background(), "genesis", "add", "--dir", dir, "--host", "127.0.0.1:40101")
	if err != nil {
		t.Fatalf("genesis add: %v\n%s", err, out)
	}
	for _, want := range []string{
		"relay-0 in " + filepath.Join(dir, "relay-0") + ": listens on /ip4/127.0.0.1/tcp/40101/p2p/",
		"it dials the first pool, " + pool1.Peers[0],
		"start it with: leiosnode run --config " + filepath.Join(dir, "relay-0", "config.json"),
		"no other node needs a change or a restart",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("genesis add's output lacks %q:\n%s", want, out)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "relay-0", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	topology, err := config.ReadTopology(cfg.TopologyFile)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IssuerKeyFile != "" || cfg.ListenAddrs[0] != "/ip4/127.0.0.1/tcp/40101" || cfg.HTTPAddr != "127.0.0.1:40102" ||
		len(topology.Peers) != 1 || topology.Peers[0] != pool1.Peers[0] {
		t.Errorf("relay-0: config %+v, topology %v", cfg, topology.Peers)
	}
	if out, err := execute(context.Background(), "genesis", "add", "--dir", dir, "--host", "127.0.0.1:40103"); err != nil || !strings.Contains(out, "relay-1 in ") {
		t.Errorf("a second relay: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a pool", []string{"--dir", dir, "--host", "127.0.0.1:40105", "--pool"}, "a network with one pool more is a new network"},
		{"a taken address", []string{"--dir", dir, "--host", "127.0.0.1:40101"}, "relay-0 listens there already"},
		{"a pool's address", []string{"--dir", dir, "--host", strings.Split(pool1.Peers[0], "/p2p/")[0]}, "node-0 listens there already"},
		{"not a network", []string{"--dir", t.TempDir(), "--host", "127.0.0.1:40105"}, "not a network leiosnode genesis wrote"},
		{"no host", []string{"--dir", dir}, `"host" not set`},
		{"a bad host", []string{"--dir", dir, "--host", "127.0.0.1:99999"}, "want 1–65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := execute(context.Background(), append([]string{"genesis", "add"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
