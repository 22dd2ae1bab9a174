package config

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/leios/protocolset"
)

func TestLoadResolvesPaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	write := func(c string) {
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"genesisFile": "../genesis.json", "databasePath": "db", "nodeKeyFile": "node.skey",
		"issuerSigningKeyFile": "issuer.skey", "vrfSigningKeyFile": "/keys/vrf.skey", "blsSigningKeyFile": "bls.skey"}`)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{
		{c.GenesisFile, filepath.Join(filepath.Dir(dir), "genesis.json")}, {c.DatabasePath, filepath.Join(dir, "db")},
		{c.IssuerKeyFile, filepath.Join(dir, "issuer.skey")}, {c.VRFKeyFile, "/keys/vrf.skey"}, {c.BLSKeyFile, filepath.Join(dir, "bls.skey")},
	} {
		if p[0] != p[1] {
			t.Errorf("path %s, want %s", p[0], p[1])
		}
	}

	// A producer may leave out the BLS key (it does not vote); a relay may
	// not have one.
	write(`{"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n", "issuerSigningKeyFile": "i", "vrfSigningKeyFile": "v"}`)
	if c, err := Load(path); err != nil || c.BLSKeyFile != "" {
		t.Errorf("a producer without a BLS key: %v", err)
	}
	write(`{"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n", "blsSigningKeyFile": "b"}`)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "blsSigningKeyFile") {
		t.Errorf("a relay with a BLS key: %v", err)
	}
}

// TestUnknownFields: a misspelt setting is an error naming it, not a node
// silently running without it; so is anything after the JSON value.
func TestUnknownFields(t *testing.T) {
	dir := t.TempDir()
	write := func(name, c string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg := write("config.json", `{"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n", "httpAdr": "127.0.0.1:3000"}`)
	if _, err := Load(cfg); err == nil || !strings.Contains(err.Error(), `unknown field "httpAdr"`) || !strings.Contains(err.Error(), cfg) {
		t.Errorf("config with a misspelt field: %v", err)
	}
	cfg = write("trailing.json", `{"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n"} {}`)
	if _, err := Load(cfg); err == nil || !strings.Contains(err.Error(), "after the JSON value") {
		t.Errorf("config with data after it: %v", err)
	}
	topo := write("topology.json", `{"peer": ["/ip4/127.0.0.1/tcp/1"]}`)
	if _, err := ReadTopology(topo); err == nil || !strings.Contains(err.Error(), `unknown field "peer"`) || !strings.Contains(err.Error(), topo) {
		t.Errorf("topology with a misspelt field: %v", err)
	}
}

// TestMultiaddrs: a listen address or a peer that is not a multiaddr (a
// peer without its /p2p/ id) is refused, naming the setting and the value.
func TestMultiaddrs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n", "listenAddrs": ["127.0.0.1:3001"]}`), 0o644)
	if _, err := Load(cfg); err == nil || !strings.Contains(err.Error(), `listenAddrs: "127.0.0.1:3001"`) {
		t.Errorf("listen address not a multiaddr: %v", err)
	}
	topo := filepath.Join(dir, "topology.json")
	os.WriteFile(topo, []byte(`{"peers": ["/ip4/127.0.0.1/tcp/3001"]}`), 0o644)
	if _, err := ReadTopology(topo); err == nil || !strings.Contains(err.Error(), `peer "/ip4/127.0.0.1/tcp/3001"`) {
		t.Errorf("peer without its id: %v", err)
	}
	os.WriteFile(topo, []byte(`{"peers": ["/ip4/127.0.0.1/tcp/3001/p2p/12D3KooWLNcJHgT2VPRBzPxTZmkvrwMhPEHnV7BM1aaYxefoN3GP"]}`), 0o644)
	if _, err := ReadTopology(topo); err != nil {
		t.Errorf("a good topology: %v", err)
	}
}

// TestPeerSharing: a relay shares peers unless its config says not to; a
// block producer does not unless its config says to; a negative target of
// peers is refused, naming the setting.
func TestPeerSharing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	const relay = `"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n"`
	const producer = relay + `, "issuerSigningKeyFile": "i", "vrfSigningKeyFile": "v"`
	for _, tc := range []struct {
		config string
		shares bool
		target int
	}{
		{`{` + relay + `}`, true, 0},
		{`{` + relay + `, "peerSharing": false, "targetPeers": 3}`, false, 3},
		{`{` + producer + `}`, false, 0},
		{`{` + producer + `, "peerSharing": true}`, true, 0},
	} {
		if err := os.WriteFile(path, []byte(tc.config), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.SharesPeers() != tc.shares || c.TargetPeers != tc.target {
			t.Errorf("%s: shares %v, target %d; want %v, %d", tc.config, c.SharesPeers(), c.TargetPeers, tc.shares, tc.target)
		}
	}
	if err := os.WriteFile(path, []byte(`{`+relay+`, "targetPeers": -1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "targetPeers") || !strings.Contains(err.Error(), path) {
		t.Errorf("a negative targetPeers: %v", err)
	}
}

// TestLeiosProtocols: each name of the one list is read as its set, and
// a config without the setting speaks both; any other value — a list, a
// typo, another case, the empty string — is refused in one line that
// names the file, the setting and the valid names.
func TestLeiosProtocols(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	const relay = `"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n"`
	for _, set := range protocolset.All() {
		if err := os.WriteFile(path, []byte(`{`+relay+`, "leiosProtocols": "`+set.String()+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := Load(path); err != nil || c.LeiosProtocols != set {
			t.Errorf("leiosProtocols %q: %v", set, err)
		}
	}
	if err := os.WriteFile(path, []byte(`{`+relay+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(path); err != nil || c.LeiosProtocols != protocolset.Both {
		t.Errorf("no leiosProtocols: %v, %v", c, err)
	}
	for _, bad := range []string{"cip,prototype", "CIP", "mixed", ""} {
		if err := os.WriteFile(path, []byte(`{`+relay+`, "leiosProtocols": "`+bad+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		want := fmt.Sprintf(`config %s: leiosProtocols %q is not a Leios protocol set: want cip, prototype or both`, path, bad)
		if err == nil || err.Error() != want {
			t.Errorf("leiosProtocols %q:\n got %v\nwant %s", bad, err, want)
		}
	}
}

// TestLogLevel: debug, info, warn and error (in any case) are levels, unset
// is info; anything else is refused by Load, naming the file and the
// setting, so every command that loads the config refuses it alike.
func TestLogLevel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	const relay = `"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n"`
	for _, tt := range []struct {
		level string
		want  slog.Level
		err   string
	}{
		{"", slog.LevelInfo, ""},
		{"debug", slog.LevelDebug, ""},
		{"info", slog.LevelInfo, ""},
		{"WARN", slog.LevelWarn, ""},
		{"error", slog.LevelError, ""},
		{"loud", 0, "config " + path + `: logLevel is "loud": it must be debug, info, warn or error`},
	} {
		if err := os.WriteFile(path, []byte(`{`+relay+`, "logLevel": "`+tt.level+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("logLevel %q: %v, want %s", tt.level, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("logLevel %q: %v", tt.level, err)
		case tt.err == "" && c.Level() != tt.want:
			t.Errorf("logLevel %q is %v, want %v", tt.level, c.Level(), tt.want)
		}
	}
}

// TestDuplicateKeys: a setting given twice in config.json or
// topology.json is refused in one line naming the file and the key, not
// read as its last value.
func TestDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, json string
		read       func(path string) error
		want       string
	}{
		{"config.json", `{"genesisFile": "g", "databasePath": "db", "nodeKeyFile": "n", "databasePath": "/srv/other"}`,
			func(p string) error { _, err := Load(p); return err },
			`config %s: duplicate key "databasePath": it appears twice, and only the last would count; keep one`},
		{"topology.json", `{"peers": [], "peers": ["/ip4/127.0.0.1/tcp/1/p2p/12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq"]}`,
			func(p string) error { _, err := ReadTopology(p); return err },
			`topology %s: duplicate key "peers": it appears twice, and only the last would count; keep one`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(tt.want, path)
			if err := tt.read(path); err == nil || err.Error() != want {
				t.Errorf("got %v\nwant %s", err, want)
			}
		})
	}
}
