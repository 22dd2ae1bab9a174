//go:build unix

package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyFilesWrittenPrivate: keygen, genesis (the nodes' keys and the
// firehose's funds/ payment keys) and genesis add write every signing key
// 0600, so the node starts on what they wrote; verification keys and
// addresses are 0644, for anyone to read.
func TestKeyFilesWrittenPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "keygen"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"node", "pool", "vrf", "bls", "payment"} {
		if out, err := execute(context.Background(), "keygen", "--kind", kind, "--out", filepath.Join(dir, "keygen", kind)); err != nil {
			t.Fatalf("keygen %s: %v\n%s", kind, err, out)
		}
	}
	network := filepath.Join(dir, "net")
	if out, err := execute(context.Background(), "genesis", "--dir", network, "--nodes", "2", "--relays", "1", "--funded", "2"); err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	if out, err := execute(context.Background(), "genesis", "add", "--dir", network, "--host", "127.0.0.1:40111"); err != nil {
		t.Fatalf("genesis add: %v\n%s", err, out)
	}

	want := map[string]os.FileMode{".skey": 0o600, ".vkey": 0o644, ".addr": 0o644}
	seen := map[string]int{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		mode, ok := want[filepath.Ext(path)]
		if !ok {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != mode {
			t.Errorf("%s: mode %04o, want %04o", path, info.Mode().Perm(), mode)
		}
		rel, _ := filepath.Rel(dir, path)
		seen[strings.SplitN(rel, string(filepath.Separator), 2)[0]+" "+filepath.Ext(path)]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// keygen: 5 skeys, 4 vkeys (a node key has none), 1 addr; genesis: 4 a
	// pool (node, issuer, VRF, BLS), 1 a relay, 1 a funded address; the
	// added relay 1.
	for what, n := range map[string]int{"keygen .skey": 5, "keygen .vkey": 4, "keygen .addr": 1, "net .skey": 2*4 + 2 + 2} {
		if seen[what] != n {
			t.Errorf("%d %s files checked, want %d (%v)", seen[what], what, n, seen)
		}
	}
}
