//go:build unix

package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBCheck: db check says ok for each database of a node that ran and
// stopped, refuses to check those of a running node, and names the store,
// what is wrong and what to do when one lost its manifest marker.
func TestDBCheck(t *testing.T) {
	dir, cfg := devnetNode(t)
	chainDir, leiosDir := filepath.Join(dir, "node-0", "db", "chain"), filepath.Join(dir, "node-0", "db", "leios")

	node := startNode(t, cfg)
	out, err := execute(context.Background(), "db", "check", "--config", cfg)
	if err == nil || !strings.Contains(out, "LeiosDB "+leiosDir+": in use by another process") {
		t.Errorf("checked a running node's databases: %v\n%s", err, out)
	}
	node.stop(t)

	out, err = execute(context.Background(), "db", "check", "--config", cfg)
	if err != nil || !strings.Contains(out, "config "+cfg+": ok") || !strings.Contains(out, "chain database "+chainDir+": ok\n") ||
		!strings.Contains(out, "LeiosDB "+leiosDir+": ok\n") || !strings.Contains(out, "certified closures "+leiosDir+": ok\n") {
		t.Fatalf("a stopped node's databases: %v\n%s", err, out)
	}

	// What would refuse the start is found too, before the stores: a key
	// gone, an address another program holds.
	key := filepath.Join(dir, "node-0", "vrf.skey")
	if err := os.Rename(key, key+".away"); err != nil {
		t.Fatal(err)
	}
	out, err = execute(context.Background(), "db", "check", "--config", cfg)
	if err == nil || !strings.Contains(out, "config "+cfg+": vrfSigningKeyFile") || !strings.Contains(out, "chain database "+chainDir+": ok\n") {
		t.Errorf("a node whose VRF key is gone: %v\n%s", err, out)
	}
	if err := os.Rename(key+".away", key); err != nil {
		t.Fatal(err)
	}
	var c struct {
		HTTPAddr string `json:"httpAddr"`
	}
	readJSON(t, cfg, &c)
	held, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	out, err = execute(context.Background(), "db", "check", "--config", cfg)
	held.Close()
	if err == nil || !strings.Contains(out, "httpAddr "+c.HTTPAddr+": ") {
		t.Errorf("a node whose HTTP address is held: %v\n%s", err, out)
	}

	markers, _ := filepath.Glob(filepath.Join(leiosDir, "marker.manifest.*"))
	for _, m := range markers {
		os.Remove(m)
	}
	out, err = execute(context.Background(), "db", "check", "--config", cfg)
	if err == nil || !strings.Contains(out, "chain database "+chainDir+": ok\n") ||
		!strings.Contains(out, "LeiosDB "+leiosDir+": corrupt: the directory holds files but no Pebble store (its marker.manifest file is missing); delete "+leiosDir) {
		t.Errorf("a LeiosDB without its manifest marker: %v\n%s", err, out)
	}
}

// TestDBCheckRefusesSigningKeyReadableByOthers: db check fails a node whose
// signing key group or others may read with the line the node would refuse
// to start with, and passes its config check once the key is 0600 again
// (the stores of a node that never ran are judged apart).
func TestDBCheckRefusesSigningKeyReadableByOthers(t *testing.T) {
	dir, cfg := devnetNode(t)
	for _, k := range []struct{ setting, file string }{
		{"nodeKeyFile", "node.skey"},
		{"issuerSigningKeyFile", "issuer.skey"},
		{"vrfSigningKeyFile", "vrf.skey"},
		{"blsSigningKeyFile", "bls.skey"},
	} {
		t.Run(k.file, func(t *testing.T) {
			key := filepath.Join(dir, "node-0", k.file)
			if err := os.Chmod(key, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := execute(context.Background(), "db", "check", "--config", cfg)
			want := "config " + cfg + ": " + k.setting + ": " + key +
				": readable by group or others (mode 0644): a signing key must be private; run chmod 600 " + key + "\n"
			if err == nil || !strings.HasPrefix(out, want) {
				t.Errorf("db check with %s at 0644: %v\n%s\nwant it to begin with: %s", k.file, err, out, want)
			}
			if err := os.Chmod(key, 0o600); err != nil {
				t.Fatal(err)
			}
			out, _ = execute(context.Background(), "db", "check", "--config", cfg)
			if !strings.HasPrefix(out, "config "+cfg+": ok") {
				t.Errorf("db check with %s at 0600:\n%s", k.file, out)
			}
		})
	}
}

// TestDBCheckAbsentStores: a store that is not there — a node that never
// ran, a chain database deleted — is no fault: the node creates it empty at
// start and syncs it from its peers, and db check says so and exits 0.
func TestDBCheckAbsentStores(t *testing.T) {
	dir, cfg := devnetNode(t)
	chainDir, leiosDir := filepath.Join(dir, "node-0", "db", "chain"), filepath.Join(dir, "node-0", "db", "leios")
	out, err := execute(context.Background(), "db", "check", "--config", cfg)
	want := "chain database " + chainDir + ": absent; created empty at start, synced from peers\n" +
		"LeiosDB " + leiosDir + ": absent; created empty at start, synced from peers\n"
	if err != nil || !strings.HasSuffix(out, want) {
		t.Errorf("a node that never ran: %v\n%s\nwant it to end with:\n%s", err, out, want)
	}

	startNode(t, cfg).stop(t)
	if err := os.RemoveAll(chainDir); err != nil {
		t.Fatal(err)
	}
	out, err = execute(context.Background(), "db", "check", "--config", cfg)
	want = "chain database " + chainDir + ": absent; created empty at start, synced from peers\n" +
		"LeiosDB " + leiosDir + ": ok\n"
	if err != nil || !strings.HasSuffix(out, want) {
		t.Errorf("a chain database deleted: %v\n%s\nwant it to end with:\n%s", err, out, want)
	}
}
