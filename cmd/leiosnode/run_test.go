//go:build unix

package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunStartupErrors: a node that cannot start says why in one line on
// stderr that names the file or setting, exits with status 1, and never
// panics. Each row is run as an operator would, as its own process, on a
// devnet node's files with one thing wrong.
func TestRunStartupErrors(t *testing.T) {
	dir, good := devnetNode(t)
	nodeDir := filepath.Dir(good)
	var base map[string]any
	readJSON(t, good, &base)
	var genesis map[string]any
	readJSON(t, filepath.Join(dir, "genesis.json"), &genesis)

	// write puts a config (and a genesis, if changed) beside the good one.
	write := func(name string, edit func(c, g map[string]any)) string {
		c, g := clone(t, base), clone(t, genesis)
		edit(c, g)
		gPath := filepath.Join(dir, name+"-genesis.json")
		writeJSON(t, gPath, g)
		if c["genesisFile"] == "../genesis.json" {
			c["genesisFile"] = gPath
		}
		path := filepath.Join(nodeDir, name+".json")
		writeJSON(t, path, c)
		return path
	}
	set := func(key string, v any) func(c, g map[string]any) {
		return func(c, _ map[string]any) { c[key] = v }
	}
	setGenesis := func(key string, v any) func(c, g map[string]any) {
		return func(_, g map[string]any) { g[key] = v }
	}
	os.WriteFile(filepath.Join(dir, "broken-genesis.json"), []byte(`{"slotLengthMs": 100,`), 0o644)
	os.WriteFile(filepath.Join(nodeDir, "peers-typo.json"), []byte(`{"peer": []}`), 0o644)
	os.WriteFile(filepath.Join(nodeDir, "peers-bad.json"), []byte(`{"peers": ["/ip4/127.0.0.1/tcp/1"]}`), 0o644)

	type row struct {
		name string
		args []string
		want string
	}
	run := func(t *testing.T, rows []row) {
		for _, r := range rows {
			t.Run(r.name, func(t *testing.T) {
				stderr, code := runCLI(t, r.args...)
				checkOneErrorLine(t, stderr, code, r.want)
			})
		}
	}
	cfg := func(name string, edit func(c, g map[string]any)) []string {
		return []string{"run", "--config", write(name, edit)}
	}

	// Another program holds the node's ports: refused before a database
	// is created.
	listenAddr := base["listenAddrs"].([]any)[0].(string)
	for _, p := range []struct {
		row
		held, db string
	}{
		{row{"libp2p port in use", cfg("libp2p-port", set("databasePath", "db-libp2p-port")), "listenAddrs " + listenAddr + ": "},
			"127.0.0.1:" + strings.Split(listenAddr, "/")[4], "db-libp2p-port"},
		{row{"HTTP port in use", cfg("http-port", set("databasePath", "db-http-port")), "httpAddr " + base["httpAddr"].(string) + ": "},
			base["httpAddr"].(string), "db-http-port"},
	} {
		l, err := net.Listen("tcp", p.held)
		if err != nil {
			t.Fatal(err)
		}
		run(t, []row{p.row})
		l.Close()
		if _, err := os.Stat(filepath.Join(nodeDir, p.db)); !os.IsNotExist(err) {
			t.Errorf("%s: %s exists after the refused start", p.name, p.db)
		}
	}

	// A node runs on the good config: a second one finds its database
	// locked.
	node := startNode(t, good)
	run(t, []row{
		{"locked database", cfg("same-db", func(c, _ map[string]any) {
			c["listenAddrs"], c["httpAddr"] = []string{"/ip4/127.0.0.1/tcp/0"}, "127.0.0.1:0" // its own ports
		}),
			"chain database " + filepath.Join(nodeDir, "db", "chain") + ": in use by another process"},
	})
	node.stop(t)

	// Its databases now belong to the genesis it ran with.
	run(t, []row{
		{"no config flag", []string{"run"}, `"config" not set`},
		{"missing config", []string{"run", "--config", filepath.Join(dir, "nope.json")}, "nope.json: no such file"},
		{"incomplete config", cfg("incomplete", func(c, _ map[string]any) { delete(c, "nodeKeyFile") }), "are required"},
		{"bad log level", cfg("loud", set("logLevel", "loud")), "logLevel"},
		{"unknown config field", cfg("typo", func(c, _ map[string]any) { c["httpAdr"] = c["httpAddr"]; delete(c, "httpAddr") }),
			`typo.json: json: unknown field "httpAdr"`},
		{"missing genesis", cfg("no-genesis", set("genesisFile", filepath.Join(dir, "nope-genesis.json"))), "nope-genesis.json: no such file"},
		{"invalid genesis JSON", cfg("broken-genesis", set("genesisFile", filepath.Join(dir, "broken-genesis.json"))), "broken-genesis.json: unexpected EOF"},
		{"unknown genesis field", cfg("genesis-typo", setGenesis("securityParm", 10)), `genesis-typo-genesis.json: json: unknown field "securityParm"`},
		{"unknown topology field", cfg("topology-typo", set("topologyFile", "peers-typo.json")), `peers-typo.json: json: unknown field "peer"`},
		{"missing key", cfg("no-key", set("nodeKeyFile", "nope.skey")), "nodeKeyFile: keys: open " + filepath.Join(nodeDir, "nope.skey")},
		{"wrong-type key", cfg("vrf-as-node-key", set("nodeKeyFile", "vrf.skey")), `nodeKeyFile: ` + filepath.Join(nodeDir, "vrf.skey") + `: keys: wrong key type`},
		{"bad listen multiaddr", cfg("listen", set("listenAddrs", []string{"127.0.0.1:3001"})), `listenAddrs: "127.0.0.1:3001"`},
		{"bad peer multiaddr", cfg("peer", set("topologyFile", "peers-bad.json")), `peers-bad.json: peer "/ip4/127.0.0.1/tcp/1"`},
		{"database of another network (k)", cfg("k", setGenesis("securityParam", 20)), "belongs to another network"},
		{"database of another network (nonce)", cfg("nonce", setGenesis("epochNonce", strings.Repeat("ab", 32))), "belongs to another network"},
		{"database of another network (slot length)", cfg("slot", setGenesis("slotLengthMs", 200)), "belongs to another network"},
	})
}

// checkOneErrorLine: the process exited with 1, said want in its one
// "Error: " line, and printed no panic.
func checkOneErrorLine(t *testing.T, stderr string, code int, want string) {
	t.Helper()
	var errLines []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "Error: ") {
			errLines = append(errLines, line)
		}
	}
	if code != 1 || len(errLines) != 1 || !strings.Contains(errLines[0], want) ||
		strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("exit %d, want 1 and one error line containing %q; stderr:\n%s", code, want, stderr)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func clone(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}
