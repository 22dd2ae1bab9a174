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
