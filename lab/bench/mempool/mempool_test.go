package mempool

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/blake2b"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/lab/bench/benchtest"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/lab/bench/txchains"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// runMempoolCommand runs leiosbench mempool with args; it returns standard
// output.
func runMempoolCommand(t *testing.T, args ...string) string {
	t.Helper()
	return benchtest.Run(t, NewCommand(), args...)
}

var tinyMempoolRun = []string{
	"--duration", "300ms", "--tip-change-every", "80ms", "--read-every", "20ms", "--forge-every", "50ms",
	"--offered", "300", "--peers", "2,3", "--hold-occupancies", "200,400", "--ceiling-txs", "100",
}

// A tiny run end to end: both mempools in every cell, blocks that drain
// the mempool, both kinds of walks, the hold test, the targets, the JSON
// and the plot; numbers that must agree with each other do.
func TestMempoolCommandJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mempool.json")
	runMempoolCommand(t, append(tinyMempoolRun, "--json", path, "--plots", dir)...)
	var r mempoolReport
	if err := output.ReadJSON(path, &r); err != nil {
		t.Fatal(err)
	}
	if r.CeilingTxS <= 0 || r.TxBytes <= 0 || r.Machine.CPUs < 1 {
		t.Fatalf("ceiling %.0f tx/s, txs of %d bytes, machine %+v", r.CeilingTxS, r.TxBytes, r.Machine)
	}
	if len(r.Cells) != 2*2 {
		t.Fatalf("%d cells, want 2 peer counts × 2 mempools", len(r.Cells))
	}
	for _, c := range r.Cells {
		if c.Admitted == 0 || c.ServeStall.Reads == 0 || c.ForgeStall.Reads == 0 || c.Syncs == 0 || c.Blocks != c.Syncs {
			t.Fatalf("%+v: nothing happened", c)
		}
		// The blocks took txs, and what they did not take is still held.
		if c.BlockTxs == 0 || int64(c.FinalOccupancyTxs+c.BlockTxs) < c.Admitted {
			t.Fatalf("%+v: %d admitted, %d on chain, %d held", c, c.Admitted, c.BlockTxs, c.FinalOccupancyTxs)
		}
		if c.ExpectedTxS != min(300, r.CeilingTxS) {
			t.Fatalf("%+v: expected throughput is not min(offered, ceiling %.0f)", c, r.CeilingTxS)
		}
		if c.MaxReaderStallNs != max(c.ForgeStall.MaxNs, c.ServeStall.MaxNs) || c.ServeStall.P50Ns > c.ServeStall.P99Ns || c.ForgeWalkMaxNs < c.ForgeStall.MaxNs {
			t.Fatalf("%+v: stalls do not add up", c)
		}
		// A control walk after every walk; the runtime's figures over the cell.
		if c.ControlStall.Reads != c.ServeStall.Reads || c.ServeStall.Over1ms > c.ServeStall.Reads || c.Machine.AllocBytesPerS <= 0 || c.Machine.SchedLatencyP99Ns > c.Machine.MaxSchedLatencyNs {
			t.Fatalf("%+v: no control walks or runtime figures", c)
		}
	}
	if len(r.Holds) != 2*2 {
		t.Fatalf("%d hold results, want 2 occupancies × 2 mempools", len(r.Holds))
	}
	for i, h := range r.Holds {
		if want := []int{200, 400}[i/2]; h.HeldTxs < want || h.SyncNs < h.LockHeldNs {
			t.Fatalf("%+v: want ≥ %d txs held and the lock held within the sync", h, want)
		}
	}
	if len(r.Targets) < 4 || !strings.HasPrefix(r.Targets[1].What, "double-buffered max reader stall") {
		t.Fatalf("targets %+v", r.Targets)
	}
	benchtest.CheckPNG(t, filepath.Join(dir, "mempool.png"))
}

func TestMempoolCommandTables(t *testing.T) {
	out := runMempoolCommand(t, append(tinyMempoolRun, "--skip-hold", "--plots", "")...)
	for _, want := range []string{"serial validation ceiling", "Max reader stall", "Reader stall p99", "control walk", "longest wait for a P", "Throughput", "Syncs", "Occupancy", "forge's whole walk", "Targets"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Lock hold of one sync") {
		t.Fatalf("--skip-hold printed the hold table:\n%s", out)
	}
}

// One mempool alone, traced: every table shows it alone, and the trace's
// account finds every read the benchmark timed.
func TestMempoolOneMempoolTraced(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "mempool.json")
	out := runMempoolCommand(t, append(tinyMempoolRun, "--skip-hold", "--plots", "", "--mempools", "double-buffered",
		"--trace", filepath.Join(dir, "mempool.trace"), "--json", jsonPath)...)
	if !strings.Contains(out, "Max reader stall (double-buffered)") || strings.Contains(out, "double-buffered / single-lock") {
		t.Fatalf("--mempools double-buffered:\n%s", out)
	}
	if !strings.Contains(out, "Where the reads over 1 ms spent their time") {
		t.Fatalf("no account of the trace:\n%s", out)
	}
	var r mempoolReport
	if err := output.ReadJSON(jsonPath, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 2 {
		t.Fatalf("%d cells, want 2 peer counts × 1 mempool", len(r.Cells))
	}
	for _, c := range r.Cells {
		want := map[string]int{regionServeWalk: c.ServeStall.Reads, regionControlWalk: c.ControlStall.Reads, regionForgeSnapshot: c.ForgeStall.Reads}
		cell := fmt.Sprintf("%s %d tx/s × %d peers", c.Mempool, c.OfferedTxS, c.Peers)
		for _, tw := range r.Trace {
			if tw.Cell == cell {
				if tw.Reads != want[tw.Region] || tw.Over1ms > tw.Reads {
					t.Errorf("%s, %s: the trace has %d reads (%d over 1 ms), the benchmark timed %d", cell, tw.Region, tw.Reads, tw.Over1ms, want[tw.Region])
				}
				delete(want, tw.Region)
			}
		}
		if len(want) > 0 {
			t.Errorf("%s: the trace has no %v", cell, want)
		}
	}
}

// The control walk reads what the walk read, and calibrates its
// repetitions to the walk's median time.
func TestMPControlWalk(t *testing.T) {
	var txs []txsubmission.MempoolTx
	for i := range mpServeWindow + 5 {
		bytes := []byte{byte(i), byte(i >> 8)}
		txs = append(txs, txsubmission.MempoolTx{Ticket: uint64(10 + 2*i), Hash: block.Hash(blake2b.Sum256(bytes)), Bytes: bytes, Size: len(bytes)})
	}
	var c mpControlWalk
	c.hold(txs)
	if got := c.walk(0, mpServeWindow); got != mpServeWindow {
		t.Fatalf("read %d of a full window", got)
	}
	if got := c.walk(txs[len(txs)-3].Ticket, mpServeWindow); got != 2 {
		t.Fatalf("read %d after the third last, want 2", got)
	}
	// One read of the private copy takes 10 µs, the walk 40 µs.
	control := func() time.Duration { return time.Duration(max(c.reps, 1)) * 10 * time.Microsecond }
	for range 10 {
		c.calibrate(mpServeWindow, 40*time.Microsecond, control())
	}
	c.calibrate(mpServeWindow, 50*time.Millisecond, control()) // a stalled walk moves no median
	if c.reps != 4 {
		t.Fatalf("%d repetitions for a walk 4 times as long as one read", c.reps)
	}
	c.calibrate(3, time.Second, time.Nanosecond) // a short window does not count
	if c.reps != 4 {
		t.Fatalf("%d repetitions after a short window", c.reps)
	}
}

// The quick mode runs in seconds (its matrix shrunk here further, so the
// race detector's runs stay short).
func TestMempoolQuick(t *testing.T) {
	out := runMempoolCommand(t, "--quick", "--offered", "1000", "--hold-occupancies", "500", "--plots", "")
	for _, want := range []string{"1000 tx/s", "1s per cell", "a block (RB + certified EB, the forge's selection) every 250ms", "Lock hold of one sync", "Targets"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestMempoolFlagsValidate(t *testing.T) {
	good := mempoolFlags{Duration: 2 * time.Second, SyncPeriod: time.Second, ReadPeriod: time.Second, ForgePeriod: time.Second, Offered: []int{1}, Peers: []int{1}, Occupancies: []int{1}, CeilingTxs: 1}
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*mempoolFlags){
		"zero duration":               func(f *mempoolFlags) { f.Duration = 0 },
		"negative cost":               func(f *mempoolFlags) { f.ApplyCost = -1 },
		"zero peers":                  func(f *mempoolFlags) { f.Peers = []int{0} },
		"no ceiling txs":              func(f *mempoolFlags) { f.CeilingTxs = 0 },
		"no forge walk":               func(f *mempoolFlags) { f.ForgePeriod = 0 },
		"cells too short for a block": func(f *mempoolFlags) { f.SyncPeriod = f.Duration },
		"unknown mempool":             func(f *mempoolFlags) { f.Mempools = []string{"lock-free"} },
	} {
		f := good
		mutate(&f)
		if f.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The chain pool covers the busiest cell and the hold test.
func TestMempoolChainShape(t *testing.T) {
	f := mempoolFlags{ApplyCost: 200 * time.Microsecond, Duration: 20 * time.Second, Offered: []int{100, 1000, 10000}, Peers: []int{2, 20, 100}, Occupancies: []int{10_000, 56_000}, CeilingTxs: 4000}
	chains, length := f.chainShape()
	if chains != 100 || chains*length < 5000*20 || chains*length < 56_000 {
		t.Fatalf("%d chains of %d", chains, length)
	}
}

// The baseline keeps the rules: duplicates and conflicts refused, a sync
// after a block drops the block's txs and keeps the rest, the walks see
// what is held, a full mempool makes a submit with a deadline fail with
// ErrFull.
func TestSingleLockMempool(t *testing.T) {
	ctx := context.Background()
	chains, err := txchains.Build(ctx, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	costs := &txchains.Costs{}
	led := txchains.NewLedger(chains, costs)
	a, b := chains.Txs[0], chains.Txs[1]
	m, err := newSingleLockMempool(mempool.Options{
		TipLedger: led.TipLedger, Params: ledger.DefaultParams(), Apply: costs.ApplyFunc, Reapply: costs.ReapplyFunc,
		CapacityBytes: 4 * a[0].Size(),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range []*ledger.Tx{a[0], a[1], b[0]} {
		if err := m.Add(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Add(ctx, a[1]); !errors.Is(err, mempool.ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := m.Add(ctx, b[2]); !errors.Is(err, ledger.ErrInputNotInUTxO) {
		t.Fatalf("gap in the chain: %v", err)
	}
	if ids := m.TxsAfter(nil, 1, 10); len(ids) != 2 || ids[0].Hash != a[1].Hash() || ids[1].Ticket != 3 {
		t.Fatalf("TxsAfter(1) = %+v", ids)
	}
	// It appends to the caller's buffer, up to max of its own.
	kept := []txsubmission.MempoolTx{{Ticket: 99}}
	if ids := m.TxsAfter(kept, 0, 2); len(ids) != 3 || ids[0].Ticket != 99 || ids[1].Ticket != 1 || ids[2].Hash != a[1].Hash() {
		t.Fatalf("TxsAfter(kept, 0, 2) = %+v", ids)
	}
	if err := led.Adopt([]*ledger.Tx{a[0]}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if n, _ := m.occupancy(); n != 2 {
		t.Fatalf("after a block of one tx: %d txs held, want 2", n)
	}
	if _, ok := m.Lookup(a[0].Hash()); ok {
		t.Fatal("the block's tx is still served")
	}
	var walked []*ledger.Tx
	for tx := range m.Txs() {
		walked = append(walked, tx)
	}
	if len(walked) != 2 || walked[0] != a[1] || walked[1] != b[0] {
		t.Fatalf("Txs walks %d txs", len(walked))
	}
	for _, tx := range []*ledger.Tx{a[2], b[1]} {
		if err := m.Add(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := m.Add(short, b[2]); !errors.Is(err, mempool.ErrFull) {
		t.Fatalf("full: %v", err)
	}
}
