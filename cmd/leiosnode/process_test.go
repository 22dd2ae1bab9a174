//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/internal/waittest"
)

// devnetNode writes a one-node devnet (leiosnode genesis, with args) into a
// new directory and returns that directory and the node's config.
func devnetNode(t *testing.T, args ...string) (dir, config string) {
	t.Helper()
	dir = t.TempDir()
	args = append([]string{"genesis", "--dir", dir, "--nodes", "1", "--funded", "1"}, args...)
	if out, err := execute(context.Background(), args...); err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	return dir, filepath.Join(dir, "node-0", "config.json")
}

func cliCommand(t *testing.T, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=cli")
	return cmd
}

// runCLI runs the CLI as its own process and returns its stderr and exit
// status.
func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := cliCommand(t, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}

// nodeProcess is a node run as its own process, as an operator runs it.
type nodeProcess struct {
	cmd    *exec.Cmd
	lines  chan string     // its stderr, line by line; closed at its end
	stderr strings.Builder // the lines read so far
}

// startNode runs the node of config and waits until it runs.
func startNode(t *testing.T, config string) *nodeProcess {
	t.Helper()
	return startNodeCommand(t, cliCommand(t, "run", "--config", config))
}

// startNodeCommand starts cmd, a leiosnode run, and waits until the node
// runs.
func startNodeCommand(t *testing.T, cmd *exec.Cmd) *nodeProcess {
	t.Helper()
	p := &nodeProcess{cmd: cmd, lines: make(chan string, 1<<16)}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() }) // only matters when a test fails half-way
	go func() {
		defer close(p.lines)
		for s := bufio.NewScanner(stderr); s.Scan(); {
			p.lines <- s.Text()
		}
	}()
	if !p.await(t, "node running") {
		p.cmd.Wait()
		t.Fatalf("the node exited before running:\n%s", p.stderr.String())
	}
	return p
}

// await reads the node's stderr until a line holds s, and reports whether
// one did before the node's end.
func (p *nodeProcess) await(t *testing.T, s string) bool {
	t.Helper()
	timeout := time.After(waittest.Hang)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return false
			}
			p.stderr.WriteString(line + "\n")
			if strings.Contains(line, s) {
				return true
			}
		case <-timeout:
			t.Fatalf("no line with %q after %v, a hang:\n%s", s, waittest.Hang, p.stderr.String())
		}
	}
}

// exit waits for the node to end by itself, failing the test only past a
// hang's ceiling, and returns its whole stderr and its exit status.
func (p *nodeProcess) exit(t *testing.T) (string, int) {
	t.Helper()
	timeout := time.After(waittest.Hang)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.cmd.Wait()
				return p.stderr.String(), p.cmd.ProcessState.ExitCode()
			}
			p.stderr.WriteString(line + "\n")
		case <-timeout:
			t.Fatalf("the node still runs after %v, a hang:\n%s", waittest.Hang, p.stderr.String())
		}
	}
}

// stop interrupts the node and checks that it stopped cleanly.
func (p *nodeProcess) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	if stderr, code := p.exit(t); code != 0 {
		t.Fatalf("the node did not stop cleanly (exit %d):\n%s", code, stderr)
	}
}
