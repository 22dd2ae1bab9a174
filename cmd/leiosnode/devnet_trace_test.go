package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/leiosnode/leiosnode/internal/simtrace"
)

// TestDevnetTraceTiesForTheLeiosTools runs a three-node devnet on the CIP's
// protocols, fed more than an RB carries so that EBs are forged and voted
// on, and reads its merged trace as the Leios tools do: every line of the
// format with the fields its readers require (simtrace.Check); every slot
// of every node with its Slot event; each RB, EB and vote generated before
// any node sent or received it; each EB named as the RB that announced it,
// each vote and certification on an EB generated before it; votes on the
// wire.
func TestDevnetTraceTiesForTheLeiosTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a devnet for about twenty seconds")
	}
	t.Setenv(asCLIEnv, "cli")
	dir := t.TempDir()
	traceFile := filepath.Join(dir, "trace.jsonl")
	out, err := execute(context.Background(), "devnet", "--dir", filepath.Join(dir, "devnet"), "--nodes", "3",
		"--security-param", "3", "--duration", "20s", "--protocols", "cip", "--tx-rate", "60", "--tx-size", "large",
		// Slots of 400 ms give a vote 2 s to land, for nodes built with
		// the race detector on a loaded machine; a block every 1.6 s.
		"--slot-length-ms", "400", "--active-slots-coeff", "0.25",
		"--trace", traceFile)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	trace, err := os.ReadFile(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	if lines, err := simtrace.Check(bytes.NewReader(trace)); err != nil {
		t.Fatalf("the trace: line %d: %v", lines, err)
	}
	a, err := simtrace.AuditTrace(bytes.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the trace's %d events by type: %v", a.Lines, a.Counts)
	for _, p := range a.Problems {
		t.Errorf("the trace misleads its readers: %s", p)
	}
	for _, typ := range []string{"RBGenerated", "EBGenerated", "VTBundleGenerated", "EBSent", "EBReceived", "VTBundleSent", "VTBundleReceived"} {
		if a.Counts[typ] == 0 {
			t.Errorf("no %s event: %v", typ, a.Counts)
		}
	}
}
