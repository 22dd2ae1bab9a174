package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

// TestNodeProcesses: a node that dies on its own is reported as an
// unexpected exit while the others run on; stop gives SIGTERM, then SIGKILL
// to a node that ignores it; output goes to each node's log.
func TestNodeProcesses(t *testing.T) {
	t.Setenv(asCLIEnv, "fake")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var nodes []layout.Node
	for _, behavior := range []string{"polite", "stubborn", "failing"} {
		n := layout.Node{Name: behavior, Dir: filepath.Join(dir, behavior)}
		n.ConfigFile = filepath.Join(n.Dir, behavior)
		if err := os.Mkdir(n.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	// Long enough for the polite node, which exits at once on SIGTERM, to
	// be scheduled and exit on a machine busy with other suites: the
	// stubborn one is killed after it, so the test takes this long.
	const stopTimeout = 10 * time.Second
	ps, err := Start(exe, nodes, nil, stopTimeout)
	if err != nil {
		t.Fatal(err)
	}
	polite, stubborn, failing := ps.procs[0], ps.procs[1], ps.procs[2]

	select {
	case <-failing.exited:
	case <-time.After(waittest.Hang):
		ps.Stop()
		t.Fatalf("the failing node did not exit in %v, a hang", waittest.Hang)
	}
	if !failing.unexpected || failing.ExitState() != "exited: exit status 3" {
		t.Errorf("failing node: unexpected %v, state %q", failing.unexpected, failing.ExitState())
	}
	// Both others must be up (and the stubborn one deaf to SIGTERM) before
	// the stop, or the test would not test the escalation.
	for _, p := range []*Process{polite, stubborn} {
		waitForLog(t, p.logFile, "ready")
		if s := p.ExitState(); s != "" {
			t.Errorf("%s: %q while it should run", p.name, s)
		}
	}

	start := time.Now()
	ps.Stop()
	took := time.Since(start)
	if polite.unexpected || stubborn.unexpected {
		t.Errorf("stopped nodes counted as unexpected exits")
	}
	if !strings.Contains(stubborn.ExitState(), "killed") {
		t.Errorf("stubborn node: %q, want it killed", stubborn.ExitState())
	}
	if polite.ExitState() != "stopped" {
		t.Errorf("polite node: %q, want stopped", polite.ExitState())
	}
	if took < stopTimeout {
		t.Errorf("stop took %v: the stubborn node was killed before its %v", took, stopTimeout)
	}
	if log, _ := os.ReadFile(failing.logFile); !strings.Contains(string(log), "failing on purpose") {
		t.Errorf("failing node's log: %q", log)
	}
	if want := "run --config " + nodes[0].ConfigFile + " >>" + polite.logFile + " 2>&1"; !strings.HasSuffix(polite.CommandLine(), want) {
		t.Errorf("command line %q, want it to end in %q", polite.CommandLine(), want)
	}
}

func waitForLog(t *testing.T, path, want string) {
	t.Helper()
	waittest.Until(t, fmt.Sprintf("%s saying %q", path, want), func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), want)
	})
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/usr/bin/leiosnode", "/usr/bin/leiosnode"},
		{"--config", "--config"},
		{"/tmp/my devnet/config.json", `'/tmp/my devnet/config.json'`},
		{"it's", `'it'\''s'`},
		{"", "''"},
		{"$HOME", `'$HOME'`},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
