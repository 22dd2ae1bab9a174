package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/lab/devnet/chaos"
	"github.com/leiosnode/leiosnode/lab/load"
)

// TestChaosReport sums up faults by kind, the forks and the txs, and
// prints a line a fault.
func TestChaosReport(t *testing.T) {
	spec, _ := chaos.ParseSpec("kill=30s,freeze=60s:10s,partition=90s")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(v int64) *int64 { return &v }
	faults := []chaos.Fault{
		{Kind: chaos.Kill, Nodes: []string{"node-1"}, At: at.Add(20 * time.Second), AtSeconds: 20, LengthMs: 2000, Recovered: true, RejoinMs: ms(800),
			TipBefore: &apitypes.TipStatus{BlockNumber: 17}, TipAfter: &apitypes.TipStatus{BlockNumber: 16}},
		{Kind: chaos.Freeze, Nodes: []string{"node-0"}, At: at.Add(50 * time.Second), AtSeconds: 50, LengthMs: 10000, Recovered: true, RejoinMs: ms(400)},
		{Kind: chaos.Kill, Nodes: []string{"node-2"}, At: at.Add(70 * time.Second), AtSeconds: 70, LengthMs: 2000, Recovered: true, RejoinMs: ms(1200)},
		{Kind: chaos.Partition, Nodes: []string{"node-2"}, At: at.Add(95 * time.Second), AtSeconds: 95, LengthMs: 5000,
			Problem: "not recovered 2m0s after the fault ended: node-2's tip #90 is 12 blocks below the highest, #102"},
	}
	forks := []chaos.ForkSeen{{Node: "node-2", Depth: 2}, {Node: "node-0", Depth: 1}, {Node: "node-2", Depth: 3}}
	txs := &load.Report{Lost: 0, DroppedByNodes: 7}
	drops := []load.Drop{
		{At: at.Add(5 * time.Second), Node: "node-0", Txs: 1}, // before any fault
		{At: at.Add(23 * time.Second), Node: "node-1", Txs: 4},
		{At: at.Add(73 * time.Second), Node: "node-2", Txs: 2},
		{At: at.Add(75 * time.Second), Node: "node-2", Txs: 1},
	}
	r := newChaosReport(spec, 42, faults, "the nodes did not recover from the partition of node-2", forks, txs, drops)
	if got := []uint64{r.Faults[0].TxsDropped, r.Faults[1].TxsDropped, r.Faults[2].TxsDropped, r.Faults[3].TxsDropped}; !slices.Equal(got, []uint64{4, 0, 3, 0}) {
		t.Errorf("txs dropped by fault %v, want [4 0 3 0]", got)
	}
	if faults[0].TxsDropped != 0 {
		t.Error("the report changed the scheduler's faults")
	}

	s := r.Summary
	if s.Injected != 4 || s.Recovered != 3 || *s.MedianRejoinMs != 800 || *s.MaxRejoinMs != 1200 || s.Forks != 3 || s.DeepestFork != 3 {
		t.Errorf("summary %+v", s)
	}
	if k := s.ByKind[chaos.Kill]; k.Injected != 2 || k.Recovered != 2 || *k.MedianRejoinMs != 1000 || *k.MaxRejoinMs != 1200 {
		t.Errorf("kills %+v", k)
	}
	if p := s.ByKind[chaos.Partition]; p.Injected != 1 || p.Recovered != 0 || p.MedianRejoinMs != nil {
		t.Errorf("partitions %+v", p)
	}
	if *r.TxsLost != 0 || *r.TxsDroppedByNodes != 7 || r.Spec != "kill=30s:2s,freeze=1m0s:10s,partition=1m30s:5s,quiet=30s" {
		t.Errorf("report %+v", r)
	}

	var out bytes.Buffer
	printChaosSummary(&out, r)
	for _, want := range []string{
		"chaos (kill=30s:2s,freeze=1m0s:10s,partition=1m30s:5s,quiet=30s, seed 42): 4 faults, 3 recovered; time to rejoin median 0.80 s, max 1.20 s",
		"+20.0s kill      node-1           2.0s  rejoined 0.80 s after (tip #17 before the kill, #16 on restart); 4 txs dropped",
		"+95.0s partition node-2           5.0s  NOT RECOVERED: not recovered 2m0s",
		"forks seen: 3 rollbacks, the deepest 3 blocks (node-0 1, node-2 2)",
		"txs lost: 0 (7 dropped by their nodes were sent again by the firehose)",
		"the chaos mode stopped early: the nodes did not recover",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}

	checkFormatted(t, r, out.String())

	// Without a firehose, no txs; without faults, empty lists, not null.
	b, err := json.Marshal(newChaosReport(spec, 1, nil, "", nil, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"faults":[]`, `"forks":[]`, `"injected":0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	if strings.Contains(string(b), "txsLost") {
		t.Errorf("%s has txs without a firehose", b)
	}
}
