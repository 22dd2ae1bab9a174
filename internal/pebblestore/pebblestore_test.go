package pebblestore

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

var (
	key     = []byte("network")
	devnet  = Network{Genesis: [32]byte{1}, About: "devnet/genesis.json"}
	testnet = Network{Genesis: [32]byte{2}, About: "testnet/genesis.json"}
)

func options(fs vfs.FS, n Network, inits *int) Options {
	return Options{
		Name:       "test store",
		Pebble:     &pebble.Options{FS: fs},
		Network:    n,
		NetworkKey: key,
		Init: func(b *pebble.Batch) error {
			*inits++
			return b.Set([]byte("initial"), nil, nil)
		},
	}
}

func mustOpen(t *testing.T, fs vfs.FS, n Network, inits *int) *DB {
	t.Helper()
	s, err := Open("db", options(fs, n, inits))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCreateOnlyWhenEmpty: a new directory gets a store with its first
// batch; an existing store is opened, and must be of the same network.
func TestCreateOnlyWhenEmpty(t *testing.T) {
	mem := vfs.NewMem()
	inits := 0
	s := mustOpen(t, mem, devnet, &inits)
	if _, closer, err := s.Get([]byte("initial")); err != nil {
		t.Fatalf("the first batch was not written: %v", err)
	} else {
		closer.Close()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, mem, devnet, &inits)
	s.Close()
	if inits != 1 {
		t.Errorf("Init ran %d times, want once", inits)
	}

	_, err := Open("db", options(mem, testnet, &inits))
	if !errors.Is(err, ErrOtherNetwork) || !strings.Contains(err.Error(), devnet.About) || !strings.Contains(err.Error(), testnet.About) {
		t.Errorf("opened under another genesis: %v", err)
	}
	if _, err := Open("db", options(mem, devnet, &inits)); err != nil {
		t.Errorf("a refused open left the store locked: %v", err)
	}
}

// TestExistingStoreNeverRecreated: a directory that holds files but no
// Pebble store (its marker.manifest gone), or a store without a stamp, is
// refused as corrupt rather than opened empty.
func TestExistingStoreNeverRecreated(t *testing.T) {
	mem := vfs.NewMem()
	inits := 0
	mustOpen(t, mem, devnet, &inits).Close()
	names, _ := mem.List("db")
	for _, name := range names {
		if strings.HasPrefix(name, "marker.manifest") {
			mem.Remove(mem.PathJoin("db", name))
		}
	}
	_, err := Open("db", options(mem, devnet, &inits))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "marker.manifest") || !strings.Contains(err.Error(), "delete db") {
		t.Errorf("opened without its manifest marker: %v", err)
	}

	unstamped := vfs.NewMem()
	p, err := pebble.Open("db", &pebble.Options{FS: unstamped})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := Open("db", options(unstamped, devnet, &inits)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "no network stamp") {
		t.Errorf("opened a store without a stamp: %v", err)
	}
	if inits != 1 {
		t.Errorf("Init ran %d times, want once", inits)
	}
}

// TestFaults: Pebble's ways of failing a write — a panic, a Fatalf, an
// error from Commit — each end in the store's one fault, which later
// commits return, and Close leaves the store as it is.
func TestFaults(t *testing.T) {
	diskFull := &fs.PathError{Op: "write", Path: "db/000004.log", Err: syscall.ENOSPC}
	for _, tt := range []struct {
		name  string
		write func(s *DB) error
		want  error
	}{
		{"panic", func(s *DB) error { panic(diskFull) }, ErrDiskFull},
		{"Fatalf", func(s *DB) error {
			s.DB.Close() // what Fatalf leaves behind may never be closed
			logger{s, nil}.Fatalf("pebble: fatal commit error: %v", diskFull)
			return nil
		}, ErrDiskFull},
		{"error", func(s *DB) error { return pebble.ErrCorruption }, ErrCorrupt},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inits := 0
			s := mustOpen(t, vfs.NewMem(), devnet, &inits)
			err := s.guard(func() error { return tt.write(s) })
			err = s.Fail(err)
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "test store db: ") {
				t.Fatalf("fault %v, want %v", err, tt.want)
			}
			select {
			case <-s.Failed():
			default:
				t.Fatal("Failed not closed")
			}
			b := s.NewBatch()
			b.Set([]byte("k"), nil, nil)
			if err2 := s.Commit(b, pebble.Sync); err2 != err {
				t.Errorf("a commit after the fault: %v", err2)
			}
			if err2 := s.Close(); err2 != err {
				t.Errorf("Close: %v", err2)
			}
		})
	}
}

// TestAbandonedStoreLeavesNoEmptyTable: a table Pebble had begun when the
// store failed, and never wrote, is removed as the store is abandoned, and
// its writes are refused from then on, so no version can name it; a table
// with bytes is left for the next open to judge, and so is an empty one
// whose write was in flight.
func TestAbandonedStoreLeavesNoEmptyTable(t *testing.T) {
	for _, inFlight := range []bool{false, true} {
		t.Run(fmt.Sprintf("a write in flight %v", inFlight), func(t *testing.T) {
			mem := vfs.NewMem()
			inits := 0
			s := mustOpen(t, mem, devnet, &inits)
			fsys := failedFS{s.fs, s}
			empty, err := fsys.Create("db/900001.sst", vfs.WriteCategoryUnspecified)
			if err != nil {
				t.Fatal(err)
			}
			written, err := fsys.Create("db/900002.sst", vfs.WriteCategoryUnspecified)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := written.Write([]byte("a block")); err != nil {
				t.Fatal(err)
			}
			fault := s.Fail(&fs.PathError{Op: "write", Path: "db/000004.log", Err: syscall.ENOSPC})
			if inFlight {
				s.tableWrites.RLock()
			}
			if err := s.Close(); err != fault {
				t.Errorf("Close: %v", err)
			}
			if inFlight {
				s.tableWrites.RUnlock()
			}
			if _, err := mem.Stat("db/900001.sst"); (err == nil) != inFlight {
				t.Errorf("the empty table: %v, with a write in flight %v", err, inFlight)
			}
			if _, err := mem.Stat("db/900002.sst"); err != nil {
				t.Errorf("the written table: %v", err)
			}
			if _, err := empty.Write([]byte("late")); err != fault {
				t.Errorf("a table's write after the fault: %v", err)
			}
			if _, err := fsys.Create("db/900003.sst", vfs.WriteCategoryUnspecified); err != fault {
				t.Errorf("a table created after the fault: %v", err)
			}
		})
	}
}
