package forge

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/simtrace"
)

// stampedChain is the forge's Chain, noting on a shared clock when a
// block was added: when the node starts sending it.
type stampedChain struct {
	chainOf
	now   func() time.Time
	added time.Time
}

func (c *stampedChain) AddBlock(blk *block.Block) (bool, error) {
	c.added = c.now()
	return c.chainOf.AddBlock(blk)
}

// TestTraceWritesTheGeneratedBeforeSending: a forged block's RBGenerated
// and its EB's EBGenerated are stamped before the block is added to the
// chain, which sends it, so that no receipt precedes them; the EB bears
// its RB's id, as the trace verifier ties them.
func TestTraceWritesTheGeneratedBeforeSending(t *testing.T) {
	start := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	var ticks atomic.Int64 // a clock that moves a millisecond at each look
	clock := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Millisecond) }
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	trace, err := simtrace.Create(path, "node-0", start, clock)
	if err != nil {
		t.Fatal(err)
	}
	var chain *stampedChain
	f := newFixture(t, false, 1000, func(o *Options) {
		o.EBLimits = block.EBLimits{MaxBodyBytes: 1000, MaxClosureBytes: 600, MaxTxs: 3}
		o.Trace = trace
		chain = &stampedChain{chainOf: o.Chain.(chainOf), now: clock}
		o.Chain = chain
	})
	f.leios.chain = f.chain
	f.admit(t, f.chainOfTxs(t, 12)...)
	blk, err := f.forger.ForgeSlot(1)
	if err != nil || blk.Header.Announcement == nil {
		t.Fatalf("no block announcing an EB: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run writes what is queued, then returns
	if err := trace.Run(ctx); err != nil {
		t.Fatal(err)
	}

	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	added := chain.added.Sub(start).Seconds()
	generated := map[string]string{} // type → id
	for sc := bufio.NewScanner(file); sc.Scan(); {
		var l struct {
			Time    float64 `json:"time_s"`
			Message struct{ Type, ID string }
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Message.Type == "RBGenerated" || l.Message.Type == "EBGenerated" {
			generated[l.Message.Type] = l.Message.ID
			if l.Time >= added {
				t.Errorf("%s stamped at %.3f s, the block added at %.3f s", l.Message.Type, l.Time, added)
			}
		}
	}
	if id := blk.Hash().String(); generated["RBGenerated"] != id || generated["EBGenerated"] != id {
		t.Errorf("generated %v, want the RB's id %s for both", generated, id)
	}
}
