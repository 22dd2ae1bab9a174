package txsubmission

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/lab/bench/benchtest"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/lab/bench/txchains"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network/txsubmission"
	"github.com/leiosnode/leiosnode/node"
)

// The quick mode end to end, shrunk further so the race detector's runs
// stay short: the no-peer cells, both ways of serving at each peer count
// over real sessions, the peers receiving what was added, the tables, the
// JSON and the plot.
func TestTxSubmissionQuick(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "txsubmission.json")
	out := benchtest.Run(t, NewCommand(), "--quick", "--offered", "300", "--peers", "2,3", "--duration", "600ms", "--warm-up", "300ms",
		"--block-every", "400ms", "--json", path, "--plots", dir)
	var r tsReport
	if err := output.ReadJSON(path, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Alone) != 1 || r.Alone[0].Added == 0 || r.Alone[0].CPUNs <= 0 || r.Alone[0].Served != 0 {
		t.Fatalf("no-peer cells %+v", r.Alone)
	}
	if len(r.Cells) != 2*2 {
		t.Fatalf("%d cells, want 2 peer counts × 2 ways of serving", len(r.Cells))
	}
	for _, c := range r.Cells {
		// Every peer gets what is added; the window cuts some in flight.
		if c.Added == 0 || c.Served < int64(c.Peers)*c.Added/2 || c.CPUPerServeNs <= 0 || c.AddMaxNs <= 0 || c.Violations != 0 || c.HeldOfferedNs <= 0 {
			t.Fatalf("%+v", c)
		}
	}
	if len(r.Targets) != 4 {
		t.Fatalf("targets %+v", r.Targets)
	}
	for _, want := range []string{"loopback TCP", "1000 txs held", "300 tx/s offered", "lock-free", "lock-per-item", "CPU per tx served", "Targets"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	benchtest.CheckPNG(t, filepath.Join(dir, "txsubmission.png"))
}

// The lock-per-item walk serves what the node's adapter serves: each peer
// the ids after its cursor, in order, a window at a time, whatever other
// peers walked.
func TestLockPerItemServesTheSame(t *testing.T) {
	ctx := context.Background()
	chains, err := txchains.Build(ctx, 2, 30)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := mempool.New(mempool.Options{TipLedger: txchains.NewLedger(chains, &txchains.Costs{}).TipLedger})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cache := &dedupCache{sent: map[block.Hash]peerSet{}}
	adapter := node.TxSubmissionMempool(pool)
	for _, tx := range chains.ForPeer(0, 1) {
		if err := pool.Add(ctx, tx); err != nil {
			t.Fatal(err)
		}
		cache.admitted(tx.Hash())
	}
	walks := []lockPerItem{{adapter, pool, 0, cache}, {adapter, pool, 200, cache}}
	cursors := make([]uint64, len(walks))
	for round := range 8 {
		for p, w := range walks {
			// Both append to the caller's buffer, past what it holds.
			kept := []txsubmission.MempoolTx{{Ticket: 1 << 60}}
			got := w.TxsAfter(kept, cursors[p], 7+p)[1:]
			want := adapter.TxsAfter(kept, cursors[p], 7+p)[1:]
			if !slices.EqualFunc(got, want, func(a, b txsubmission.MempoolTx) bool { return a.Ticket == b.Ticket && a.Hash == b.Hash }) {
				t.Fatalf("round %d, peer %d: lock-per-item %v, adapter %v", round, p, got, want)
			}
			if len(got) > 0 {
				cursors[p] = got[len(got)-1].Ticket
			}
		}
	}
	if cursors[0] != 56 || cursors[1] != 60 {
		t.Fatalf("cursors %v after 8 rounds", cursors)
	}
	first := chains.Txs[0][0].Hash()
	if _, ok := walks[1].Lookup(first); !ok {
		t.Fatal("a held tx is not looked up")
	}
	cache.forget([]block.Hash{first})
	if _, ok := cache.sent[first]; ok {
		t.Fatal("a tx forgotten is still in the cache")
	}
}

func TestTxSubmissionFlagsValidate(t *testing.T) {
	good := tsFlags{Offered: []int{1000}, Peers: []int{2, 100}, Duration: time.Second, Blocks: time.Second}
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*tsFlags){
		"no window":      func(f *tsFlags) { f.Duration = 0 },
		"no blocks":      func(f *tsFlags) { f.Blocks = 0 },
		"negative warm":  func(f *tsFlags) { f.WarmUp = -1 },
		"negative held":  func(f *tsFlags) { f.Held = -1 },
		"no rates":       func(f *tsFlags) { f.Offered = nil },
		"zero peers":     func(f *tsFlags) { f.Peers = []int{0} },
		"too many peers": func(f *tsFlags) { f.Peers = []int{tsMaxPeers + 1} },
	} {
		f := good
		mutate(&f)
		if f.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
