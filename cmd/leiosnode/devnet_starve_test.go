//go:build unix

package main

import (
	"testing"

	"github.com/leiosnode/leiosnode/lab/devnet/chaos"
)

// TestDevnetEdgesReopenAfterStarvation starves a three-node devnet of real
// node processes under load (each node stopped 0.9 s of every second for
// 60 s, at its own phase): the nodes miss the voting windows of the EBs
// meanwhile, and their edges refuse txs for it. Afterwards every edge must
// take txs in again by itself within a minute, and txs reach the chain.
// Before the verdicts on missed windows expired, the edges refused for
// good: the mempools drained, no EB came to be judged in time, and nothing
// reopened them.
func TestDevnetEdgesReopenAfterStarvation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a devnet for about 150 seconds")
	}
	r := runDevnet(t, []string{"starving every node", "every node runs again after", "taking txs in"},
		"--nodes", "3", "--funded", "10", "--duration", "150s", "--warmup", "0s",
		"--tx-rate", "300", "--chaos", "starve@10s:60s,quiet=0s", "--chaos-seed", "1").report
	if r.Chaos == nil || len(r.Chaos.Faults) != 1 {
		t.Fatalf("chaos section %+v: want the one starvation", r.Chaos)
	}
	f := r.Chaos.Faults[0]
	if f.Kind != chaos.Starve || !f.Recovered || f.RejoinMs == nil || *f.RejoinMs > 60_000 {
		t.Fatalf("the starvation: %+v; want every edge open within a minute of its end", f)
	}
	// Txs reach the chain after the nodes took them in again.
	reopened := f.AtSeconds + float64(f.LengthMs+*f.RejoinMs)/1000
	onChainAfter := 0.0
	if r.Timeline != nil {
		for _, w := range r.Timeline.Windows {
			if w.FromS >= reopened {
				onChainAfter += w.OnChainPerSecond * (w.ToS - w.FromS)
			}
		}
	}
	if onChainAfter == 0 {
		t.Errorf("no tx reached the chain after the edges reopened at +%.1f s", reopened)
	}
	if r.Txs == nil || r.Txs.Lost != 0 {
		t.Errorf("txs: %+v, want none lost", r.Txs)
	}
}
