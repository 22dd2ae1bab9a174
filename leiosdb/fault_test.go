package leiosdb

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/internal/pebblestore/faulttest"
)

// TestFaults: what a disk or a person can do to a LeiosDB's directory —
// fill the disk, flip a table's bytes, cut its MANIFEST, delete the marker
// naming it — ends, in a child process, in one error line that names the
// store, what happened and what to do, never in a panic, and a store
// refused at open is left as it was; a store whose disk filled is
// consistent once there is space again; one whose disk refuses writes says
// it is an I/O error. The disk is a file system of 8 MiB the child opens
// the store on (faulttest.Disk): no root, no mount.
func TestFaults(t *testing.T) {
	for _, memtable := range []string{"32m", "1m"} {
		// A 32 MiB memtable is never flushed on an 8 MiB disk: the WAL
		// write fails. A 1 MiB one is: the flush fails first.
		t.Run("disk full, memtable "+memtable, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "leios")
			c := faulttest.Run(t, "write "+dir+" "+memtable+" free=8388608")
			c.Failed(t, "LeiosDB "+dir+": disk full", "no space left on device", "free space")
			faulttest.NoEmptyTables(t, dir)
			db, err := Open(dir, Options{Logger: quietLogger()}) // the space freed
			if err != nil {
				t.Fatalf("reopened with space freed: %v", err)
			}
			defer db.Close()
			mustConsistent(t, db)
			if points, err := db.Points(0); err != nil || len(points) == 0 {
				t.Fatalf("%d points kept, %v", len(points), err)
			}
		})
	}
	// The LeiosDB's tables fail, not its write-ahead log: written without
	// fsync, the log fails unseen by its commit, and Pebble panics fatally
	// when it next rotates it (the store refuses the commit after, but a
	// rotation may come first).
	t.Run("I/O error", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "leios")
		faulttest.Run(t, "write "+dir+" 1m eio=.sst").Failed(t, "LeiosDB "+dir+": I/O error", "input/output error",
			"check the disk", "leiosnode db check")
	})
	written := func(t *testing.T) string {
		dir := t.TempDir()
		if c := faulttest.Run(t, "write "+dir+" 32m 100"); c.Code != 0 {
			t.Fatalf("writing the store: %s", c.Stderr)
		}
		return dir
	}
	t.Run("another network", func(t *testing.T) {
		dir := written(t)
		before := faulttest.Files(t, dir)
		other := Options{Network: pebblestore.Network{Genesis: [32]byte{9}, About: "another genesis"}, Logger: quietLogger()}
		if err := CheckOpen(dir, other); !errors.Is(err, pebblestore.ErrOtherNetwork) {
			t.Errorf("CheckOpen: %v", err)
		}
		db, err := Open(dir, other)
		if err == nil {
			db.Close()
			t.Fatal("opened under another genesis")
		}
		if want := "delete " + dir + " (this store only)"; !errors.Is(err, pebblestore.ErrOtherNetwork) || !strings.Contains(err.Error(), want) {
			t.Errorf("refused with %v, want %q", err, want)
		}
		faulttest.Unchanged(t, dir, before)
	})
	faulttest.Damaged(t, "LeiosDB", written, func(dir string) error { return Check(dir, Options{Logger: quietLogger()}) })
}

// TestFaultChild is TestFaults' child. "write DIR MEMTABLE [N]" inserts EBs
// with their closures into the store in DIR until an insert fails (or N are
// in); "read DIR" opens the store and reads all of it. A word of
// faulttest.ChildFS puts the store on a small or failing disk. It exits as
// a node does: 0, or 1 with the store's error on one line.
func TestFaultChild(t *testing.T) {
	job := strings.Fields(os.Getenv(faulttest.ChildEnv))
	if len(job) == 0 {
		t.Skip("run by TestFaults")
	}
	fsys, rest, err := faulttest.ChildFS(job[1], job[2:])
	if err != nil {
		faulttest.Exit(err)
	}
	job = append(job[:2], rest...)
	opts := Options{Logger: quietLogger(), fs: fsys}
	if job[0] == "read" {
		db, err := Open(job[1], opts)
		if err == nil {
			err = db.CheckConsistency()
		}
		faulttest.Exit(cmp.Or(storeErr(db), err))
	}
	memtable, _ := strconv.ParseUint(strings.TrimSuffix(job[2], "m"), 10, 64)
	opts.MemTableBytes = memtable << 20
	db, err := Open(job[1], opts)
	if err != nil {
		faulttest.Exit(err)
	}
	n := -1
	if len(job) > 3 {
		n, _ = strconv.Atoi(job[3])
	}
	// The writes run beside a watch of the store's fault, as in a node: a
	// flush that fails for good (a full disk) stalls the writes behind it
	// for ever, and the node closes the store and exits on the fault.
	written := make(chan error, 1)
	go func() { written <- writeEBs(t, db, n) }()
	select {
	case err := <-written:
		if err != nil {
			faulttest.Exit(cmp.Or(db.Close(), err))
		}
	case <-db.Failed():
		faulttest.Exit(db.Close()) // its fault
	}
	faulttest.Exit(db.Close())
}

// writeEBs inserts EBs of 100 txs of 1,000 bytes, with their closures,
// until an insert fails or n are in (n < 0: no end).
func writeEBs(t *testing.T, db *DB, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	for slot := uint64(1); n < 0 || slot <= uint64(n); slot++ {
		txs := make([][]byte, 100)
		for i := range txs {
			txs[i] = blocktest.Tx(rng.Uint64(), 1000)
		}
		eb := testBody(t, txs)
		p := pointOf(slot, eb)
		if err := db.InsertPoint(p, eb.Size()); err != nil {
			return err
		}
		if _, err := db.InsertBody(p, eb.Bytes()); err != nil {
			return err
		}
		if _, err := db.InsertTxs(block.HashTxs(txs)); err != nil {
			return err
		}
	}
	return nil
}

// storeErr is db's failure, if it opened.
func storeErr(db *DB) error {
	if db == nil {
		return nil
	}
	return db.Err()
}
