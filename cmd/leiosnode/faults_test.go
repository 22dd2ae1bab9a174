//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/leiosnode/leiosnode/internal/pebblestore/faulttest"
)

// TestRunStopsOnDiskFull: a node whose disk fills while it runs stops with
// one error line naming the database, the file and what to do, exit status
// 1 and no panic; started again on the disk still full, it says so and
// ends; once space is freed it starts again and its databases pass db
// check.
func TestRunStopsOnDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a node until its disk is full")
	}
	// Smaller than one preallocated write-ahead log: each write then takes
	// new space.
	mnt := faulttest.MountTmpfs(t, 2<<20)
	_, cfg := devnetNode(t, "--start-delay", "1s")
	var c map[string]any
	readJSON(t, cfg, &c)
	c["databasePath"] = filepath.Join(mnt, "db")
	writeJSON(t, cfg, c)

	node := startNode(t, cfg)
	if !node.await(t, "forged block") {
		t.Fatalf("the node ended before it forged a block:\n%s", node.stderr.String())
	}
	ballast := filepath.Join(mnt, "ballast")
	os.WriteFile(ballast, make([]byte, 2<<20), 0o644) // fails when the disk is full, as it should
	stderr, code := node.exit(t)
	checkOneErrorLine(t, stderr, code, "chain database "+filepath.Join(mnt, "db", "chain")+": disk full")

	// Started again on the disk still full, it says so and ends, leaving
	// no empty table behind.
	stderr, code = runCLI(t, "run", "--config", cfg)
	checkOneErrorLine(t, stderr, code, ": disk full: ")
	checkOneErrorLine(t, stderr, code, "free space on its disk and start the node again")
	t.Logf("started again on the full disk: %s", stderr)
	faulttest.NoEmptyTables(t, filepath.Join(mnt, "db", "chain"))
	faulttest.NoEmptyTables(t, filepath.Join(mnt, "db", "leios"))

	os.Remove(ballast)
	faulttest.GrowTmpfs(t, mnt, 64<<20)
	startNode(t, cfg).stop(t)
	if out, err := execute(context.Background(), "db", "check", "--config", cfg); err != nil {
		t.Errorf("db check after the disk filled: %v\n%s", err, out)
	}
}
