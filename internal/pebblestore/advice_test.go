package pebblestore

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// lockDenied is a file system on which the LOCK file cannot be opened: what
// a directory owned by another user gives (root, who runs the tests, is
// never denied).
type lockDenied struct{ vfs.FS }

func (l lockDenied) Lock(name string) (io.Closer, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
}

// TestAdvice: each way a store's directory can be wrong is named for what
// it is, with the least destructive fix.
func TestAdvice(t *testing.T) {
	written := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "db")
		inits := 0
		s, err := Open(dir, options(vfs.Default, devnet, &inits))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	only := func(t *testing.T, dir, pattern string) string {
		files, _ := filepath.Glob(filepath.Join(dir, pattern))
		if len(files) != 1 {
			t.Fatalf("want one %s in %s, found %q", pattern, dir, files)
		}
		return files[0]
	}
	open := func(dir string, fsys vfs.FS) error {
		inits := 0
		s, err := Open(dir, options(fsys, devnet, &inits))
		if err == nil {
			s.Close()
		}
		return err
	}
	refused := func(t *testing.T, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatal("opened")
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%v\nwant it to say %q", err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("more than one line: %q", err)
		}
		t.Logf("the operator reads: %v", err)
	}

	t.Run("LOCK permission denied", func(t *testing.T) {
		err := open("db", lockDenied{vfs.NewMem()})
		refused(t, err, "permission denied", "let the user the node runs as read and write db")
		if errors.Is(err, ErrInUse) {
			t.Errorf("blamed on another process: %v", err)
		}
	})
	t.Run("deleted MANIFEST", func(t *testing.T) {
		dir := written(t)
		os.Remove(only(t, dir, "MANIFEST-*"))
		err := open(dir, vfs.Default)
		refused(t, err, "corrupt", "MANIFEST", "delete "+dir+" and start the node again")
		if errors.Is(err, ErrIO) {
			t.Errorf("an I/O error: %v", err)
		}
	})
	t.Run("a file for a directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "db")
		os.WriteFile(dir, []byte("not a store"), 0o644)
		refused(t, open(filepath.Join(dir, "chain"), vfs.Default), "not a directory", "databasePath")
	})
	t.Run("garbage OPTIONS", func(t *testing.T) {
		dir := written(t)
		optionsFile := only(t, dir, "OPTIONS-*")
		os.WriteFile(optionsFile, []byte("[Version]\n\x00\x01garbage=\n[[[\n"), 0o644)
		refused(t, open(dir, vfs.Default), "bad OPTIONS file "+optionsFile, "delete that file")
		os.Remove(optionsFile)
		inits := 0
		s, err := Open(dir, options(vfs.Default, devnet, &inits))
		if err != nil {
			t.Fatalf("without its OPTIONS file: %v", err)
		}
		defer s.Close()
		if _, closer, err := s.Get([]byte("initial")); err != nil {
			t.Fatalf("the store lost its records: %v", err)
		} else {
			closer.Close()
		}
	})
}
