package forge

import (
	"testing"

	"github.com/leiosnode/leiosnode/block"
)

// The EB budget halves with each missed window and grows back a step with
// each met one, each EB counted once, within the floor and the limits.
func TestEBBudget(t *testing.T) {
	full := block.EBLimits{MaxBodyBytes: 500_000, MaxClosureBytes: 12_000_000, MaxTxs: 10_000}
	b := newEBBudget()
	for _, step := range []struct {
		slot   uint64
		missed bool
		txs    int // MaxTxs after it
	}{
		{10, false, 10_000},
		{20, true, 5_000},
		{20, true, 5_000}, // the same EB again: no change
		{15, true, 5_000}, // an older one: no change
		{30, true, 2_500},
		{40, true, 1_250},
		{50, true, 625},
		{60, true, 500}, // the floor, 5 %
		{70, true, 500},
		{80, false, 1_500},
		{90, false, 2_500},
	} {
		b.observe(step.slot, step.missed)
		got := b.limits(full)
		if got.MaxTxs != step.txs || got.MaxBodyBytes != full.MaxBodyBytes {
			t.Fatalf("after slot %d (missed %v): %+v, want %d txs", step.slot, step.missed, got, step.txs)
		}
		if want := int(float64(full.MaxClosureBytes) * float64(step.txs) / float64(full.MaxTxs)); got.MaxClosureBytes < want-1 || got.MaxClosureBytes > want+1 {
			t.Fatalf("closure bytes %d, want %d", got.MaxClosureBytes, want)
		}
	}
	for slot := uint64(100); slot < 200; slot += 10 {
		b.observe(slot, false)
	}
	if got := b.limits(full); got != full {
		t.Fatalf("grown back: %+v, want the full limits", got)
	}
	if none := (block.EBLimits{}); b.limits(none) != none {
		t.Fatal("no EBs became some")
	}
}
