package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/lab/devnet/report"
)

// devnetRun is a devnet the test binary ran as leiosnode: its directory,
// its output and its report.
type devnetRun struct {
	dir    string // the devnet's
	out    string
	report report.Report
}

// runDevnet runs `leiosnode devnet --dir … --report … args…`, each node a
// process of the test binary standing in for leiosnode; it fails the test
// if the devnet fails, if its output lacks any of wants or if it wrote no
// report. Should the test fail, the nodes' logs are logged at its end.
func runDevnet(t *testing.T, wants []string, args ...string) devnetRun {
	t.Helper()
	t.Setenv(asCLIEnv, "cli")
	tmp := t.TempDir()
	run := devnetRun{dir: filepath.Join(tmp, "devnet")}
	reportFile := filepath.Join(tmp, "report.json")
	out, err := execute(context.Background(), append([]string{"devnet", "--dir", run.dir, "--report", reportFile}, args...)...)
	run.out = out
	t.Logf("devnet output:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	b, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &run.report); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, n := range run.report.Nodes {
			log, _ := os.ReadFile(filepath.Join(run.dir, n.Name, "node.log"))
			t.Logf("%s log:\n%s", n.Name, log)
		}
	})
	return run
}
