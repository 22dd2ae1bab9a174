package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/internal/simtrace"
	"github.com/leiosnode/leiosnode/lab/devnet/report"
)

// TestDevnetEndToEnd runs a three-node devnet of real node processes (the
// test binary standing in for leiosnode) for about ten seconds, with the
// firehose feeding it, then reads its report: every node up and connected,
// blocks forged, the chains in agreement, and the firehose's txs on the
// chain of every node, none lost. k is lowered to 3 so that blocks become
// immutable in the time.
func TestDevnetEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a devnet for about ten seconds")
	}
	t.Setenv(asCLIEnv, "cli")
	dir := t.TempDir()
	reportFile, traceFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "trace.jsonl")
	out, err := execute(context.Background(), "devnet", "--dir", filepath.Join(dir, "devnet"),
		"--nodes", "3", "--funded", "3", "--security-param", "3", "--duration", "12s", "--report", reportFile, "--tx-rate", "20",
		"--trace", traceFile)
	t.Logf("devnet output:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node-0 (pid ", "run --config ", "slot ", " mempool ", " on chain ", "firehose stopped", "txs: ", "stopping the nodes", "report written to", "trace: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}

	// The merged trace: every line the simulators' format, in time order,
	// the nodes named by name.
	trace, err := os.ReadFile(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	if lines, err := simtrace.Check(bytes.NewReader(trace)); err != nil || lines < 100 {
		t.Errorf("the trace: %d lines, %v", lines, err)
	}
	// A producer named by name, whichever pool led: in 12 s one of three
	// may lead no slot.
	for _, want := range []string{`"node":"node-0"`, `"producer":"node-`, `"recipient":"node-2"`, `"type":"RBReceived"`} {
		if !bytes.Contains(trace, []byte(want)) {
			t.Errorf("the trace lacks %s", want)
		}
	}
	if bytes.Contains(trace, []byte(`"12D3Koo`)) {
		t.Error("the trace names a node by its peer ID")
	}

	b, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
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

	// The firehose's txs: admitted, on every node's chain, none lost.
	switch txs := r.Txs; {
	case txs == nil:
		t.Error("the report has no txs")
	default:
		if txs.Chains != 3 || txs.Admitted == 0 || txs.OnChain == 0 {
			t.Errorf("txs: %d chains, %d admitted, %d on chain; want 3 chains and txs on chain", txs.Chains, txs.Admitted, txs.OnChain)
		}
		if txs.Lost != 0 || txs.Unchecked != 0 || len(txs.StoppedChains) != 0 || len(txs.Problems) != 0 {
			t.Errorf("txs: %d lost, %d unchecked, stopped chains %q, problems %q", txs.Lost, txs.Unchecked, txs.StoppedChains, txs.Problems)
		}
		if placed := txs.OnChain + txs.InMempoolAtEnd + txs.OnSomeChains + txs.Lost + txs.Unchecked; placed != txs.Admitted {
			t.Errorf("txs: %d admitted but %d placed", txs.Admitted, placed)
		}
		if l := txs.Latency; l == nil || uint64(l.Txs) != txs.OnChain || l.P50Ms > l.P95Ms || l.P95Ms > l.MaxMs {
			t.Errorf("txs: latency %+v over %d txs on chain", l, txs.OnChain)
		}
	}
	// The Leios section: every node's EB list read, its status carried.
	switch l := r.Leios; {
	case l == nil:
		t.Error("the report has no leios section")
	case l.Summary.NodesRead != 3 || len(l.Nodes) != 3:
		t.Errorf("leios: %d nodes read, %d reported; want 3", l.Summary.NodesRead, len(l.Nodes))
	case l.Chain == nil || l.Chain.NodesRead != 3 || l.Chain.Blocks == 0:
		t.Errorf("leios: the chain section %+v; want the common chain of 3 nodes", l.Chain)
	default:
		for _, n := range l.Nodes {
			if n.Status == nil || n.Problem != "" {
				t.Errorf("leios %s: status %v, problem %q", n.Name, n.Status, n.Problem)
			}
		}
		// The common chain is the nodes' chains' common prefix: when two
		// leaders forged the last slot with the same txs, every chain holds
		// them but the common chain stops before them.
		if c := l.Chain; r.Txs != nil && (c.TxsViaRBs+c.TxsViaEBs == 0 || uint64(c.TxsViaRBs+c.TxsViaEBs) > r.Txs.Admitted) {
			t.Errorf("leios: %d txs through RBs and %d through EBs on the common chain, %d admitted", c.TxsViaRBs, c.TxsViaEBs, r.Txs.Admitted)
		}
	}
	for _, want := range []string{" EBs ", " cert ", "EBs: ", "the common chain of 3 nodes"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	for _, n := range r.Nodes {
		if n.TxsOnChain == 0 {
			t.Errorf("%s has no txs on its chain", n.Name)
		}
	}
	if t.Failed() {
		for i := range 3 {
			log, _ := os.ReadFile(filepath.Join(dir, "devnet", r.Nodes[i].Name, "node.log"))
			t.Logf("%s log:\n%s", r.Nodes[i].Name, log)
		}
	}
}
