//go:build linux

package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/internal/pebblestore/faulttest"
)

// TestRunStopsOnDiskFull: a node whose disk fills while it runs stops with
// one error line naming the database, the file and what to do, exit status
// 1 and no panic; once space is freed it starts again and its databases
// pass db check.
func TestRunStopsOnDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a node until its disk is full")
	}
	// Smaller than one preallocated write-ahead log: each write then takes
	// new space.
	mnt := faulttest.MountTmpfs(t, 2<<20)
	dir := t.TempDir()
	if out, err := execute(context.Background(), "genesis", "--dir", dir, "--nodes", "1", "--funded", "1", "--start-delay", "1s"); err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "node-0", "config.json")
	var c map[string]any
	readJSON(t, cfg, &c)
	c["databasePath"] = filepath.Join(mnt, "db")
	writeJSON(t, cfg, c)

	cmd := cliCommand(t, "run", "--config", cfg)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // only matters when the test fails half-way
	forged := make(chan struct{})
	var out strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		first := true
		for s := bufio.NewScanner(stderr); s.Scan(); {
			out.WriteString(s.Text() + "\n")
			if first && strings.Contains(s.Text(), "forged block") {
				close(forged)
				first = false
			}
		}
	}()
	select {
	case <-forged:
	case <-time.After(30 * time.Second):
		t.Fatal("no block forged in 30 s")
	}
	ballast := filepath.Join(mnt, "ballast")
	os.WriteFile(ballast, make([]byte, 2<<20), 0o644) // fails when the disk is full, as it should
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the node still runs a minute after its disk filled")
	}
	cmd.Wait()
	checkOneErrorLine(t, out.String(), cmd.ProcessState.ExitCode(),
		"chain database "+filepath.Join(mnt, "db", "chain")+": disk full")

	os.Remove(ballast)
	faulttest.GrowTmpfs(t, mnt, 64<<20)
	startNode(t, cfg)()
	if out, err := execute(context.Background(), "db", "check", "--config", cfg); err != nil {
		t.Errorf("db check after the disk filled: %v\n%s", err, out)
	}
}
