package simtrace

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// runReaders runs the Leios repository's readers of the format on trace
// (readers/run.sh) and returns their output, or skips t, saying why, when
// they cannot run here: LEIOS_REPO names no clone of that repository, or
// Node.js, npm or git is missing. LEIOS_TRACE_HS_DECODE and
// LEIOS_TRACE_PROCESSOR add the Haskell readers (run.sh says how).
func runReaders(t *testing.T, script, trace string) string {
	t.Helper()
	if os.Getenv("LEIOS_REPO") == "" {
		t.Skip("the Leios tools' check needs LEIOS_REPO, a clone of input-output-hk/ouroboros-leios (see readers/run.sh)")
	}
	for _, tool := range []string{"node", "npm", "git", "bash", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the Leios tools' check needs %s: %v", tool, err)
		}
	}
	out, err := exec.Command("bash", script, trace).CombinedOutput()
	if err != nil {
		t.Fatalf("the Leios tools refuse %s (%v):\n%s", filepath.Base(trace), err, out)
	}
	return string(out)
}

// TestTheLeiosToolsReadTheTrace: a trace of every kind of event this node
// writes, named and ordered as a network's merged trace is, passes the
// Leios repository's own readers: the visualiser's validator and
// aggregation, and, when given, leios-trace-hs's decoder and the trace
// processor. The devnet's test does the same on a real network's trace.
func TestTheLeiosToolsReadTheTrace(t *testing.T) {
	trace := traceOf(t,
		Slot{Node: "node-0", Slot: 7},
		Slot{Node: "node-1", Slot: 7},
		RBGenerated{ID: "aa", Slot: 7, Producer: "node-0", SizeBytes: 900, TxPayloadBytes: 700, Parent: &BlockRef{ID: "99"}},
		EBGenerated{ID: "aa", Slot: 7, Producer: "node-0", SizeBytes: 300, InputBlocks: []BlockRef{}, EndorserBlocks: []BlockRef{}},
		CPU{Node: "node-0", CPUTimeS: 0.004, TaskType: "GenRB", ID: "aa"},
		Sent{Kind: "RB", Sender: "node-0", Recipient: "node-1", MsgSizeBytes: 900, ID: "aa", Slot: 7},
		Received{Kind: "RB", Sender: "node-0", Recipient: "node-1", ID: "aa", Slot: 7},
		CPU{Node: "node-1", CPUTimeS: 0.002, TaskType: "ValRB", ID: "aa"},
		Sent{Kind: "EB", Sender: "node-0", Recipient: "node-1", MsgSizeBytes: 300, ID: "aa", Slot: 7},
		Received{Kind: "EB", Sender: "node-0", Recipient: "node-1", ID: "aa", Slot: 7},
		Slot{Node: "node-0", Slot: 8},
		Slot{Node: "node-1", Slot: 8},
		VTBundleGenerated{ID: "aa-1", Slot: 8, Producer: "node-1", SizeBytes: 82, Votes: map[string]int{"aa": 1}},
		Sent{Kind: "VTBundle", Sender: "node-1", Recipient: "node-0", MsgSizeBytes: 90, ID: "aa-1", Slot: 7},
		Received{Kind: "VTBundle", Sender: "node-1", Recipient: "node-0", ID: "aa-1", Slot: 7},
		Slot{Node: "node-0", Slot: 9},
		Slot{Node: "node-1", Slot: 9},
		RBGenerated{ID: "ab", Slot: 9, Producer: "node-1", SizeBytes: 400, Parent: &BlockRef{ID: "aa"}, Endorsement: &Endorsement{EB: BlockRef{ID: "aa"}}},
		Sent{Kind: "RB", Sender: "node-1", Recipient: "node-0", MsgSizeBytes: 400, ID: "ab", Slot: 9},
		Received{Kind: "RB", Sender: "node-1", Recipient: "node-0", ID: "ab", Slot: 9},
	)
	a, err := AuditTrace(bytes.NewReader(trace))
	if err != nil || len(a.Problems) > 0 {
		t.Fatalf("the test's own trace: %q %v", a.Problems, err)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, trace, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log(runReaders(t, filepath.Join("readers", "run.sh"), path))

	// Not a rubber stamp: an EB's receipt without its slot, as this node
	// once wrote it, is refused by the visualiser's validator.
	old := filepath.Join(t.TempDir(), "old.jsonl")
	line := `{"time_s":0.1,"message":{"type":"EBReceived","sender":"node-0","recipient":"node-1","id":"aa"}}` + "\n"
	if err := os.WriteFile(old, append(trace, line...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join("readers", "run.sh"), old).CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("FAIL")) || !bytes.Contains(out, []byte("must have required property 'slot'")) {
		t.Errorf("a receipt without a slot passed the readers (%v):\n%s", err, out)
	}
}
