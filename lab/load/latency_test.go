package load

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
)

// TestTxLatency: the quantiles of 1..100 ms, and of a single latency.
func TestTxLatency(t *testing.T) {
	var ms []time.Duration
	for i := 100; i >= 1; i-- { // in any order
		ms = append(ms, time.Duration(i)*time.Millisecond)
	}
	l := newLatency(ms, fmt.Sprintf(latencyMeasured, "node-2"))
	if l.Txs != 100 || l.P50Ms != 50 || l.P95Ms != 95 || l.MaxMs != 100 || !strings.Contains(l.Measured, "on node-2's chain") {
		t.Errorf("latency of 1..100 ms: %+v", l)
	}
	if l := newLatency([]time.Duration{-20 * time.Millisecond}, ""); l.P50Ms != -20 || l.P95Ms != -20 || l.MaxMs != -20 {
		t.Errorf("latency of one tx: %+v", l)
	}
}

func TestNearestRank(t *testing.T) {
	tests := []struct {
		xs   []int64
		q    float64
		want int64
	}{
		{[]int64{7}, 0.95, 7},
		{[]int64{1, 2}, 0.5, 1},
		{[]int64{1, 2}, 0.95, 2},
		{[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 0.95, 19},
		{[]int64{1, 2, 3}, 1, 3},
	}
	for _, tt := range tests {
		if got := nearestRank(tt.xs, tt.q); got != tt.want {
			t.Errorf("%g-quantile of %v = %d, want %d", tt.q, tt.xs, got, tt.want)
		}
	}
}

// TestSubmitToChain: a tx's latency runs from its first POST to the start
// of the slot of the block that applied it, an RB or a CertRB alike.
func TestSubmitToChain(t *testing.T) {
	clock := consensus.Clock{Start: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), SlotLength: 100 * time.Millisecond}
	c, err := indexChain([]apitypes.BlockTxs{
		{Number: 1, Slot: 7, Hash: "rb", Txs: []string{strings.Repeat("aa", 32)}},
		{Number: 2, Slot: 30, Hash: "certrb", Closure: []string{strings.Repeat("bb", 32)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := clock.Start.Add(250 * time.Millisecond)
	for _, tt := range []struct {
		hash byte
		want time.Duration
	}{
		{0xaa, 450 * time.Millisecond},  // slot 7 starts at 700 ms
		{0xbb, 2750 * time.Millisecond}, // slot 30 at 3 s
	} {
		var hash [32]byte
		for i := range hash {
			hash[i] = tt.hash
		}
		if got := submitToChain(c, clock, admittedTx{Hash: hash, Sent: sent.Add(-time.Second), Admitted: sent}); got != tt.want {
			t.Errorf("tx %x: %v, want %v", tt.hash, got, tt.want)
		}
	}
}
