//go:build unix

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/internal/waittest"
)

// TestDevnetSignals runs the devnet as its own process, as a user does: a
// node killed with kill -9 shows as down while the other runs on, and
// SIGINT then stops everything cleanly.
func TestDevnetSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a devnet for several seconds")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "devnet", "--dir", t.TempDir(), "--nodes", "2", "--funded", "0")
	cmd.Env = append(os.Environ(), asCLIEnv+"=cli")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // only matters when the test fails half-way

	lines := make(chan string)
	go func() { // ends at EOF: when the devnet process exits
		defer close(lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	var output strings.Builder
	defer func() {
		if t.Failed() {
			t.Logf("devnet output:\n%s", output.String())
		}
	}()
	// await returns the first line holding every one of parts.
	await := func(parts ...string) string {
		t.Helper()
		timeout := time.After(waittest.Hang)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("the devnet exited before printing %q", parts)
				}
				output.WriteString(line + "\n")
				if containsAll(line, parts) {
					return line
				}
			case <-timeout:
				t.Fatalf("no line with %q after %v, a hang", parts, waittest.Hang)
			}
		}
	}

	pids := map[string]int{}
	for _, name := range []string{"node-0", "node-1"} {
		line := await(name+" (pid ", "run --config")
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.Fields(line)[2], "):"))
		if err != nil {
			t.Fatalf("no pid in %q", line)
		}
		pids[name] = pid
	}
	await("| node-0 #", "| node-1 #") // both up
	if err := syscall.Kill(pids["node-1"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	await("node-1 exited: signal: killed")
	await("| node-0 #", "| node-1 down (exited: signal: killed)")

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	await("stopping the nodes")
	await("node-0 stopped")
	for range lines { // drain to EOF, then reap
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("devnet after SIGINT: %v", err)
	}
	if err := syscall.Kill(pids["node-0"], 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("node-0 (pid %d) still exists after the devnet stopped: %v", pids["node-0"], err)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
