//go:build unix

package main

import (
	"regexp"
	"slices"
	"testing"

	"github.com/leiosnode/leiosnode/lab/devnet/chaos"
)

// TestDevnetChaos runs a three-node devnet of real node processes (the test
// binary standing in for leiosnode) for 30 s with the firehose and one
// fault of each kind: a kill and restart, a freeze, a partition of one
// node through the link proxies. The nodes must recover from each, end in
// agreement, and lose no admitted tx.
func TestDevnetChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a devnet for about 40 seconds")
	}
	run := runDevnet(t, []string{"link proxies", "chaos: kill@5s:1s,freeze@11s:2s,partition@17s:3s,quiet=30s, seed 1",
		"restarted after", "freezing node-", "thawed (SIGCONT)",
		"partition: node-", "partition healed", "every node connected and on one chain", "chaos (kill@5s:1s"},
		"--nodes", "3", "--funded", "6", "--duration", "30s", "--tx-rate", "30",
		"--chaos", "kill@5s:1s,freeze@11s:2s,partition@17s:3s", "--chaos-seed", "1")
	// A fault strikes at its time or, on a busy machine, a little after.
	if !regexp.MustCompile(`chaos \+[0-9.]+s: killing node-`).MatchString(run.out) {
		t.Error("the output lacks the kill")
	}
	r := run.report
	c := r.Chaos
	if c == nil {
		t.Fatal("the report has no chaos section")
	}
	var kinds []chaos.Kind
	for _, f := range c.Faults {
		kinds = append(kinds, f.Kind)
		if !f.Recovered || f.RejoinMs == nil || len(f.Leaks) != 0 || f.Problem != "" {
			t.Errorf("fault %+v: want it recovered, and a partition without leaks", f)
		}
	}
	if want := []chaos.Kind{chaos.Kill, chaos.Freeze, chaos.Partition}; !slices.Equal(kinds, want) {
		t.Errorf("faults %v, want %v", kinds, want)
	}
	if c.Stopped != "" || c.Seed != 1 || c.Summary.Recovered != 3 {
		t.Errorf("chaos: stopped %q, seed %d, %d recovered", c.Stopped, c.Seed, c.Summary.Recovered)
	}
	if !r.Agreement.Agree {
		t.Errorf("the nodes do not agree: %q", r.Agreement.Problems)
	}
	for _, n := range r.Nodes {
		if !n.Up || n.Exited != "" {
			t.Errorf("%s: up %v, exited %q", n.Name, n.Up, n.Exited)
		}
	}
	switch txs := r.Txs; {
	case txs == nil:
		t.Error("the report has no txs")
	default:
		if txs.Admitted == 0 || txs.OnChain == 0 {
			t.Errorf("txs: %d admitted, %d on chain", txs.Admitted, txs.OnChain)
		}
		if txs.Lost != 0 || txs.Unchecked != 0 || len(txs.StoppedChains) != 0 || len(txs.Problems) != 0 {
			t.Errorf("txs: %d lost, %d unchecked, stopped chains %q, problems %q", txs.Lost, txs.Unchecked, txs.StoppedChains, txs.Problems)
		}
		if placed := txs.OnChain + txs.InMempoolAtEnd + txs.OnSomeChains + txs.Lost + txs.Unchecked; placed != txs.Admitted {
			t.Errorf("txs: %d admitted but %d placed", txs.Admitted, placed)
		}
		if c.TxsLost == nil || *c.TxsLost != 0 || c.TxsDroppedByNodes == nil || *c.TxsDroppedByNodes != txs.DroppedByNodes {
			t.Errorf("chaos txs: lost %v, dropped %v; the firehose's: %d dropped", c.TxsLost, c.TxsDroppedByNodes, txs.DroppedByNodes)
		}
	}
}
