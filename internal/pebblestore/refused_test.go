package pebblestore

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/leiosnode/leiosnode/internal/pebblestore/faulttest"
)

// writtenStore is a store on disk with a few flushed tables and more in its
// write-ahead log, closed: what a node leaves when it stops.
func writtenStore(t *testing.T) string { return writtenStoreFlushed(t, 3) }

// writtenStoreFlushed is writtenStore with flushes tables.
func writtenStoreFlushed(t *testing.T, flushes int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	inits := 0
	s, err := Open(dir, options(vfs.Default, devnet, &inits))
	if err != nil {
		t.Fatal(err)
	}
	for table := range flushes + 1 {
		b := s.NewBatch()
		for i := range 100 {
			b.Set(fmt.Appendf(nil, "key-%d-%03d", table, i), []byte(strings.Repeat("v", 100)), nil)
		}
		if err := s.Commit(b, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if table < flushes { // the last batch stays in the log
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRefusedOpenWritesNothing: each way Open refuses an existing store
// leaves its directory byte for byte as it was — no table or write-ahead
// log removed, none flushed, no MANIFEST or OPTIONS file written. Pebble
// opened for writing deletes every file its MANIFEST does not name: a
// MANIFEST cut short named none of the tables, and the refusal for the
// missing stamp came after they were gone.
func TestRefusedOpenWritesNothing(t *testing.T) {
	refusedByCheck := errors.New("the store's own check refuses it")
	for _, tt := range []struct {
		name    string
		flushes int // the tables written before the damage; 0: 3, -1: none
		damage  func(t *testing.T, dir string)
		opts    func(o *Options)
		want    string
	}{
		{name: "MANIFEST cut in half", damage: faulttest.TruncateManifest, want: "corrupt: "},
		// The node's reproduction: a store that ran once, started again
		// (its write-ahead log flushed to a table, a new MANIFEST) and
		// written to, its MANIFEST cut: what is left names no table, and
		// the logs it names hold no stamp.
		{name: "MANIFEST of a reopened store cut in half", flushes: -1, damage: func(t *testing.T, dir string) {
			inits := 0
			s, err := Open(dir, options(vfs.Default, devnet, &inits))
			if err != nil {
				t.Fatal(err)
			}
			b := s.NewBatch()
			b.Set([]byte("after the restart"), []byte(strings.Repeat("v", 1000)), nil)
			if err := s.Commit(b, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			s.Close()
			faulttest.TruncateManifest(t, dir)
		}, want: "corrupt: it holds no network stamp: it was written by an older leiosnode, was never completed, or lost its MANIFEST"},
		{name: "another network", opts: func(o *Options) { o.Network = testnet }, want: "belongs to another network"},
		{name: "manifest marker deleted", damage: faulttest.RemoveManifestMarker, want: "its marker.manifest file is missing"},
		{name: "table deleted", damage: func(t *testing.T, dir string) {
			tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(tables) == 0 {
				t.Fatalf("no table in %s", dir)
			}
			os.Remove(tables[0])
		}, want: "corrupt: "},
		{name: "OPTIONS file that does not parse", damage: func(t *testing.T, dir string) {
			options, _ := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
			for _, o := range options {
				os.WriteFile(o, []byte("[Options\n"), 0o644)
			}
		}, want: "bad OPTIONS file"},
		{name: "refused by the store's own check", opts: func(o *Options) {
			o.Check = func(*DB) error { return refusedByCheck }
		}, want: refusedByCheck.Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writtenStoreFlushed(t, max(cmp.Or(tt.flushes, 3), 0))
			if tt.damage != nil {
				tt.damage(t, dir)
			}
			before := faulttest.Files(t, dir)
			inits := 0
			opts := options(vfs.Default, devnet, &inits)
			if tt.opts != nil {
				tt.opts(&opts)
			}
			s, err := Open(dir, opts)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("refused with %q, want it to say %q", err, tt.want)
			}
			t.Logf("refused: %v", err)
			faulttest.Unchanged(t, dir, before)
		})
	}
}

// TestReadOnlyChecksThenWrites: a sound store passes the read-only checks
// and is then opened for writing, its data whole; Check sees the store
// read-only.
func TestReadOnlyChecksThenWrites(t *testing.T) {
	dir := writtenStore(t)
	inits := 0
	opts := options(vfs.Default, devnet, &inits)
	checked := false
	opts.Check = func(s *DB) error {
		checked = true
		b := s.NewBatch()
		defer b.Close()
		b.Set([]byte("k"), nil, nil)
		if err := b.Commit(nil); !errors.Is(err, pebble.ErrReadOnly) {
			return fmt.Errorf("Check's store took a write: %v", err)
		}
		return nil
	}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !checked {
		t.Error("Check did not run")
	}
	for _, key := range []string{"key-0-000", "key-3-099"} {
		if _, closer, err := s.Get([]byte(key)); err != nil {
			t.Errorf("%s: %v", key, err)
		} else {
			closer.Close()
		}
	}
	b := s.NewBatch()
	b.Set([]byte("written"), nil, nil)
	if err := s.Commit(b, pebble.Sync); err != nil {
		t.Errorf("opened but not for writing: %v", err)
	}
}

// TestMissingWALNamed: a store whose write-ahead log was deleted opens
// older, without what it held; refused for what that lost (its stamp, or
// a record its Check wants), it is refused in one line naming the log its
// MANIFEST still needs, and left as it was.
func TestMissingWALNamed(t *testing.T) {
	for _, tt := range []struct {
		name    string
		reopens int // each flushes the log before it and writes to a new one
	}{
		{"created, never flushed", 0},
		{"reopened", 1},
		{"reopened twice", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writtenStoreFlushed(t, 0)
			last := []byte("key-0-099")
			for i := range tt.reopens {
				inits := 0
				s, err := Open(dir, options(vfs.Default, devnet, &inits))
				if err != nil {
					t.Fatal(err)
				}
				last = fmt.Appendf(nil, "after reopen %d", i)
				b := s.NewBatch()
				b.Set(last, nil, nil)
				if err := s.Commit(b, pebble.Sync); err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			if len(logs) != 1 {
				t.Fatalf("want one write-ahead log in %s, found %q", dir, logs)
			}
			os.Remove(logs[0])
			before := faulttest.Files(t, dir)
			inits := 0
			opts := options(vfs.Default, devnet, &inits)
			opts.Check = func(s *DB) error {
				_, closer, err := s.Get(last)
				if err != nil {
					return s.Corrupt(fmt.Errorf("%s: %w", last, err))
				}
				return closer.Close()
			}
			s, err := Open(dir, opts)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			want := "test store " + dir + ": corrupt: its write-ahead log " + logs[0] +
				" is missing, and with it what the store wrote since its last flush; delete " + dir + " and start the node again: it resyncs the store from its peers"
			if err.Error() != want {
				t.Errorf("refused with\n%v\nwant\n%s", err, want)
			}
			faulttest.Unchanged(t, dir, before)
		})
	}
}
