package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// runMempoolCommand runs leiosbench mempool with args; it returns standard
// output.
func runMempoolCommand(t *testing.T, args ...string) string {
	t.Helper()
	cmd := newMempoolCommand()
	var out, progress bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&progress)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	return out.String()
}

var tinyMempoolRun = []string{
	"--duration", "200ms", "--tip-change-every", "60ms", "--read-every", "20ms",
	"--offered", "300", "--peers", "2,3", "--hold-occupancies", "200,400", "--ceiling-txs", "100",
}

// A tiny run end to end: both mempools in every cell, the hold test, the
// targets; numbers that must agree with each other do.
func TestMempoolCommandJSON(t *testing.T) {
	out := runMempoolCommand(t, append(tinyMempoolRun, "--json")...)
	var r mempoolReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if r.CeilingTxS <= 0 || r.TxBytes <= 0 {
		t.Fatalf("ceiling %.0f tx/s, txs of %d bytes", r.CeilingTxS, r.TxBytes)
	}
	if len(r.Cells) != 2*2 {
		t.Fatalf("%d cells, want 2 peer counts × 2 mempools", len(r.Cells))
	}
	for _, c := range r.Cells {
		if c.Admitted == 0 || c.Reads == 0 || c.Syncs == 0 {
			t.Fatalf("%+v: nothing happened", c)
		}
		// The syncer invalidates nothing: whatever was admitted is held.
		if int64(c.OccupancyTxs) < c.Admitted {
			t.Fatalf("%+v: holds fewer txs than were admitted", c)
		}
		if c.ExpectedTxS != min(300, r.CeilingTxS) {
			t.Fatalf("%+v: expected throughput is not min(offered, ceiling %.0f)", c, r.CeilingTxS)
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
	// The matrix's growth target needs cells of different occupancy, which
	// a run this small may not have.
	if len(r.Targets) < 3 || !strings.HasPrefix(r.Targets[0].What, "double-buffered max reader stall") {
		t.Fatalf("targets %+v", r.Targets)
	}
}

func TestMempoolCommandTables(t *testing.T) {
	out := runMempoolCommand(t, append(tinyMempoolRun, "--skip-hold")...)
	for _, want := range []string{"serial validation ceiling", "Max reader stall", "Throughput", "Final occupancy", "Targets"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Lock hold of one sync") {
		t.Fatalf("--skip-hold printed the hold table:\n%s", out)
	}
}

func TestMempoolFlagsValidate(t *testing.T) {
	good := mempoolFlags{Duration: time.Second, SyncPeriod: time.Second, ReadPeriod: time.Second, Offered: []int{1}, Peers: []int{1}, Occupancies: []int{1}, CeilingTxs: 1}
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*mempoolFlags){
		"zero duration":  func(f *mempoolFlags) { f.Duration = 0 },
		"negative cost":  func(f *mempoolFlags) { f.ApplyCost = -1 },
		"zero peers":     func(f *mempoolFlags) { f.Peers = []int{0} },
		"no ceiling txs": func(f *mempoolFlags) { f.CeilingTxs = 0 },
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
// that invalidates nothing keeps everything, a full mempool makes a submit
// with a deadline fail with ErrFull.
func TestSingleLockMempool(t *testing.T) {
	ctx := context.Background()
	chains, err := buildMPChains(ctx, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	costs := &mpCosts{}
	led := newMPLedger(chains.genesis, costs)
	a, b := chains.chains[0], chains.chains[1]
	m, err := newSingleLockMempool(mempool.Options{
		TipLedger: led.TipLedger, Params: ledger.DefaultParams(), Apply: costs.applyFunc, Reapply: costs.reapplyFunc,
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
	led.advance()
	if _, err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if n, _ := m.occupancy(); n != 3 || len(m.Snapshot()) != 3 {
		t.Fatalf("after a sync that invalidates nothing: %d txs", n)
	}
	if err := m.Add(ctx, a[2]); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := m.Add(short, b[1]); !errors.Is(err, mempool.ErrFull) {
		t.Fatalf("full: %v", err)
	}
}
