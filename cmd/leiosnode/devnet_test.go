package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevnetEndToEnd runs a three-node devnet of real node processes (the
// test binary standing in for leiosnode) for about ten seconds, then reads
// its report: every node up and connected, blocks forged, and the chains in
// agreement. k is lowered to 3 so that blocks become immutable in the time.
func TestDevnetEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a devnet for about ten seconds")
	}
	t.Setenv(asCLIEnv, "cli")
	dir := t.TempDir()
	reportFile := filepath.Join(dir, "report.json")
	out, err := execute(context.Background(), "devnet", "--dir", filepath.Join(dir, "devnet"),
		"--nodes", "3", "--funded", "2", "--security-param", "3", "--duration", "12s", "--report", reportFile)
	t.Logf("devnet output:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node-0 (pid ", "run --config ", "slot ", "stopping the nodes", "report written to"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}

	b, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Nodes) != 3 {
		t.Fatalf("report of %d nodes", len(r.Nodes))
	}
	var forged uint64
	for _, n := range r.Nodes {
		if !n.Up || n.Exited != "" {
			t.Errorf("%s: up %v, exited %q", n.Name, n.Up, n.Exited)
		}
		if n.Peers != 2 {
			t.Errorf("%s has %d peers, want 2", n.Name, n.Peers)
		}
		if n.Tip.BlockNumber == 0 {
			t.Errorf("%s has no blocks", n.Name)
		}
		forged += n.BlocksForged
	}
	if forged == 0 {
		t.Error("no node forged a block")
	}
	if !r.Agreement.Agree {
		t.Errorf("the nodes do not agree: %q", r.Agreement.Problems)
	}
	if t.Failed() {
		for i := range 3 {
			log, _ := os.ReadFile(filepath.Join(dir, "devnet", r.Nodes[i].Name, nodeLogFileName))
			t.Logf("%s log:\n%s", r.Nodes[i].Name, log)
		}
	}
}
