// Package faulttest does to a Pebble store's directory what disks and
// people do — fill it, fail its writes, flip its bytes, cut or delete its
// files — and runs a test's writer or reader as a child process, so the
// stores' tests can check that each fault ends in one clear error and never
// in a panic. A full disk and a failing one are file systems the store is
// opened on (Disk, FailingWrites), so those tests need neither root nor a
// mount; MountTmpfs fills a real one, for the one end-to-end case.
//
// It is for tests only, and never opens a store through its owner.
package faulttest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// MountTmpfs mounts a tmpfs of size bytes on a new directory, unmounted at
// the end of the test, to fill the disk for real: the end-to-end case of a
// node whose disk fills. It skips the test where mounting is not allowed
// (not root, no tmpfs).
func MountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

// GrowTmpfs gives a tmpfs of MountTmpfs size bytes: the space freed.
func GrowTmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatalf("growing the tmpfs: %v", err)
	}
}

// Flush moves what the store in dir holds in its write-ahead log into a
// table, with Pebble itself, so that there is a table to corrupt.
func Flush(t *testing.T, dir string) {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{ErrorIfNotExists: true, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// CorruptTable flips bytes a third of the way into the largest table of
// the store in dir, where its data blocks are, and returns its path.
func CorruptTable(t *testing.T, dir string) string {
	t.Helper()
	path := largest(t, dir, "*.sst")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Stat()
	at := info.Size() / 3
	b := make([]byte, 16)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] ^= 0xff
	}
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	return path
}

// TruncateManifest cuts the store's current MANIFEST, the one its manifest
// marker names (an older one may be larger), to half its length.
func TruncateManifest(t *testing.T, dir string) {
	t.Helper()
	markers, _ := filepath.Glob(filepath.Join(dir, "marker.manifest.*.MANIFEST-*"))
	if len(markers) != 1 {
		t.Fatalf("want one manifest marker in %s, found %q", dir, markers)
	}
	_, current, _ := strings.Cut(filepath.Base(markers[0]), ".MANIFEST-")
	truncateHalf(t, filepath.Join(dir, "MANIFEST-"+current))
}

// TruncateWAL cuts the store's newest write-ahead log to half its length:
// the tail a disk that lied about a sync loses.
func TruncateWAL(t *testing.T, dir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) == 0 {
		t.Fatalf("no write-ahead log in %s", dir)
	}
	slices.Sort(logs) // named by increasing file number
	truncateHalf(t, logs[len(logs)-1])
}

// RemoveManifestMarker deletes the file that names the store's current
// MANIFEST.
func RemoveManifestMarker(t *testing.T, dir string) {
	t.Helper()
	markers, _ := filepath.Glob(filepath.Join(dir, "marker.manifest.*"))
	if len(markers) == 0 {
		t.Fatalf("no manifest marker in %s", dir)
	}
	for _, m := range markers {
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
}

// Files returns what dir holds: each file's name and bytes.
func Files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string]string, len(entries))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// Unchanged fails the test if dir does not hold exactly before (Files): a
// file added, removed or rewritten by a start that was refused.
func Unchanged(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := Files(t, dir)
	for name, b := range before {
		switch a, ok := after[name]; {
		case !ok:
			t.Errorf("%s: removed", filepath.Join(dir, name))
		case a != b:
			t.Errorf("%s: rewritten (%d bytes, were %d)", filepath.Join(dir, name), len(a), len(b))
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s: added", filepath.Join(dir, name))
		}
	}
}

// NoEmptyTables fails the test if the store in dir holds a table file of
// no bytes: what a flush that found the disk full leaves unless it is
// removed.
func NoEmptyTables(t *testing.T, dir string) {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	for _, path := range tables {
		if info, err := os.Stat(path); err == nil && info.Size() == 0 {
			t.Errorf("empty table %s left behind", path)
		}
	}
}

func truncateHalf(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, info.Size()/2); err != nil {
		t.Fatal(err)
	}
}

func largest(t *testing.T, dir, pattern string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(files) == 0 {
		t.Fatalf("no %s in %s", pattern, dir)
	}
	size := func(p string) int64 { info, _ := os.Stat(p); return info.Size() }
	return slices.MaxFunc(files, func(a, b string) int { return int(size(a) - size(b)) })
}

// quiet keeps Pebble's messages out of the test's output.
type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// ChildEnv names the child's job in its environment (see Run).
const ChildEnv = "PEBBLESTORE_FAULT_CHILD"

// Child is what a child process run by Run reported: its stdout lines, its
// stderr, its exit status.
type Child struct {
	Lines  []string
	Stderr string
	Code   int
}

// Run runs this test binary again as a child that runs only the test
// TestFaultChild, which finds job in ChildEnv and does it, and waits for
// the child to exit.
func Run(t *testing.T, job string) Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), ChildEnv+"="+job)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	var lines []string
	for s := bufio.NewScanner(&stdout); s.Scan(); {
		lines = append(lines, s.Text())
	}
	return Child{Lines: lines, Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode()}
}

// Failed checks that the child ended as a node should on a store fault:
// exit status 1, and one line on stderr holding every one of want, with no
// panic.
func (c Child) Failed(t *testing.T, want ...string) {
	t.Helper()
	line := strings.TrimSuffix(c.Stderr, "\n")
	ok := c.Code == 1 && !strings.Contains(line, "\n") && !strings.Contains(line, "panic") && !strings.Contains(line, "goroutine ")
	for _, w := range want {
		ok = ok && strings.Contains(line, w)
	}
	if !ok {
		t.Fatalf("child exit %d, want 1 and one line with %q; stderr:\n%s", c.Code, want, c.Stderr)
	}
	t.Logf("the child said: %s", line)
}

// Damaged tries the faults of a store's files at rest, each on a new store
// from written, flushed to a table: a table with flipped bytes, a MANIFEST
// cut in half, a deleted manifest marker. For each, the child job
// "read DIR" must end in one line that says the store (named store) is
// corrupt, names the table where there is one, and says to delete the
// directory, leaving a store refused at open as it was; check, the
// store's own Check, must name the table too.
func Damaged(t *testing.T, store string, written func(t *testing.T) string, check func(dir string) error) {
	for _, fault := range []struct {
		name   string
		damage func(t *testing.T, dir string) string // what the line must name
		// atOpen: the store is refused when it opens, and must be left as
		// it was; a flipped byte may be found only by a later read.
		atOpen bool
	}{
		{"corrupted table", CorruptTable, false},
		{"truncated MANIFEST", func(t *testing.T, dir string) string { TruncateManifest(t, dir); return "" }, true},
		{"deleted manifest marker", func(t *testing.T, dir string) string { RemoveManifestMarker(t, dir); return "marker.manifest" }, true},
	} {
		t.Run(fault.name, func(t *testing.T) {
			dir := written(t)
			Flush(t, dir)
			named := fault.damage(t, dir)
			before := Files(t, dir)
			Run(t, "read "+dir).Failed(t, store+" "+dir+": corrupt", named, "delete "+dir+" and start the node again")
			if fault.atOpen {
				Unchanged(t, dir, before)
			}
			if err := check(dir); err == nil || !strings.Contains(err.Error(), named) {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

// Exit ends a child: with status 0 if err is nil, else with err as one
// line on stderr and status 1.
func Exit(err error) {
	if err == nil {
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
