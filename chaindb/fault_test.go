package chaindb

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/internal/pebblestore/faulttest"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestFaults: what a disk or a person can do to a chain database's
// directory — fill the disk, flip a table's bytes, cut its MANIFEST,
// delete the marker naming it, lose the tail of its write-ahead log —
// ends, in a child process, in one error line that names the store, what
// happened and what to do, never in a panic or a chain silently shorter,
// and a database refused at open is left as it was.
// A database whose disk filled reopens, once there is space, with every
// block it adopted and a ledger equal to a replay; one whose disk refuses
// writes says it is an I/O error. The disk is a file system of 8 MiB the
// child opens the store on (faulttest.Disk): no root, no mount.
func TestFaults(t *testing.T) {
	t.Run("disk full", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "chain")
		c := faulttest.Run(t, "write "+dir+" free=8388608")
		c.Failed(t, "chain database "+dir+": disk full", "no space left on device", "free space")
		// Opened again on the disk still full, it says so at once, and
		// leaves no empty table behind.
		faulttest.Run(t, "read "+dir+" free=0").Failed(t, "chain database "+dir+": disk full", "free space")
		faulttest.NoEmptyTables(t, dir)
		db, err := Open(dir, crashOptions()) // the space freed
		if err != nil {
			t.Fatalf("reopened with space freed: %v", err)
		}
		defer db.Close()
		checkRecovered(t, db, crashOptions().GenesisUTxO)
		adopted, _ := strconv.ParseUint(strings.TrimPrefix(c.Lines[len(c.Lines)-1], "adopted #"), 10, 64)
		if tip := db.Tip(); adopted == 0 || tip.BlockNumber < adopted {
			t.Fatalf("reopened at %s, the child had adopted #%d", tip, adopted)
		}
	})
	t.Run("I/O error", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "chain")
		faulttest.Run(t, "write "+dir+" eio").Failed(t, "chain database "+dir+": I/O error", "input/output error",
			"check the disk", "leiosnode db check")
	})
	// written is a database of 40 blocks, its immutable tip #37.
	written := func(t *testing.T) string {
		dir := t.TempDir()
		if c := faulttest.Run(t, "write "+dir+" 40"); c.Code != 0 {
			t.Fatalf("writing the database: %s", c.Stderr)
		}
		return dir
	}
	t.Run("WAL tail lost", func(t *testing.T) {
		dir := written(t)
		faulttest.TruncateWAL(t, dir)
		before := faulttest.Files(t, dir)
		faulttest.Run(t, "read "+dir).Failed(t, "chain database "+dir+": corrupt",
			"its immutable tip went back from #37", "the end of its write-ahead log was lost", "delete "+dir)
		faulttest.Unchanged(t, dir, before)
		if err := Check(dir, crashOptions()); err == nil || strings.Count(err.Error(), "chain database") != 1 ||
			!strings.Contains(err.Error(), "immutable tip went back") {
			t.Errorf("Check: %v", err)
		}
	})
	t.Run("immutable-tip marker deleted", func(t *testing.T) {
		dir := written(t)
		markers, _ := filepath.Glob(filepath.Join(dir, "marker."+immutableMarker+".*"))
		if len(markers) == 0 {
			t.Fatalf("no immutable-tip marker in %s", dir)
		}
		for _, m := range markers {
			os.Remove(m)
		}
		faulttest.TruncateWAL(t, dir)
		before := faulttest.Files(t, dir)
		faulttest.Run(t, "read "+dir).Failed(t, "chain database "+dir+": corrupt",
			"immutable-tip marker", "--accept-lost-immutable-tip", "delete "+dir)
		faulttest.Unchanged(t, dir, before)
		if err := Check(dir, crashOptions()); err == nil || !strings.Contains(err.Error(), "immutable-tip marker") {
			t.Errorf("Check: %v", err)
		}
		accepting := crashOptions()
		accepting.AcceptLostImmutableTip = true
		db, err := Open(dir, accepting)
		if err != nil {
			t.Fatalf("refused with the loss accepted: %v", err)
		}
		imm := db.ImmutableTip()
		db.Close()
		if err := Check(dir, crashOptions()); err != nil || imm.Point.IsOrigin() {
			t.Errorf("accepted at %s, then Check: %v", imm, err)
		}
	})
	t.Run("write-ahead logs deleted", func(t *testing.T) {
		dir := written(t)
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if len(logs) == 0 {
			t.Fatalf("no write-ahead log in %s", dir)
		}
		for _, l := range logs {
			os.Remove(l)
		}
		before := faulttest.Files(t, dir)
		// Never flushed, the database needs every log from its first on,
		// the one its creation wrote its stamp into.
		want := "chain database " + dir + ": corrupt: its write-ahead log " + logs[0] +
			" is missing, and with it what the store wrote since its last flush; delete " + dir + " and start the node again: it resyncs the store from its peers\n"
		if c := faulttest.Run(t, "read "+dir); c.Code != 1 || c.Stderr != want {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and exactly:\n%s", c.Code, c.Stderr, want)
		}
		faulttest.Unchanged(t, dir, before)
	})
	t.Run("another network", func(t *testing.T) {
		dir := written(t)
		before := faulttest.Files(t, dir)
		other := crashOptions()
		other.Network = pebblestore.Network{Genesis: [32]byte{9}, About: "another genesis"}
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
	faulttest.Damaged(t, "chain database", written, func(dir string) error { return Check(dir, crashOptions()) })
}

// TestFaultChild is TestFaults' child. "write DIR [N]" extends the chain in
// DIR with blocks of one 32 KiB output each, printing each adopted block,
// until AddBlock fails (or N blocks are in); "read DIR" opens the database
// and reads every block. A word of faulttest.ChildFS puts the database on
// a small or failing disk. It exits as a node does: 0, or 1 with the
// database's error on one line.
func TestFaultChild(t *testing.T) {
	job := strings.Fields(os.Getenv(faulttest.ChildEnv))
	if len(job) == 0 {
		t.Skip("run by TestFaults")
	}
	opts := crashOptions()
	fsys, rest, err := faulttest.ChildFS(job[1], job[2:])
	if err != nil {
		faulttest.Exit(err)
	}
	opts.fs = fsys
	job = append(job[:2], rest...)
	db, err := Open(job[1], opts)
	if err != nil {
		faulttest.Exit(err)
	}
	if job[0] == "read" {
		for n := uint64(1); n <= db.Tip().BlockNumber && err == nil; n++ {
			_, err = db.BlockByNumber(n)
		}
		faulttest.Exit(cmp.Or(db.Err(), err))
	}
	n := -1
	if len(job) > 2 {
		n, _ = strconv.Atoi(job[2])
	}
	f := newForger()
	var parent *block.Header
	in := keysOf(crashOptions().GenesisUTxO)
	var spend ledger.TxIn
	for k := range in {
		spend = k
		break
	}
	for i := 0; n < 0 || i < n; i++ {
		tx := testTx{Spend: []ledger.TxIn{spend}, Outs: []testOut{{Addr: bytes.Repeat([]byte{byte(i)}, 32<<10), Coin: 1}}}
		blk := f.next(parent, 1, tx)
		res, err := db.AddBlock(blk)
		if err != nil {
			faulttest.Exit(cmp.Or(db.Close(), err))
		}
		fmt.Printf("adopted #%d\n", res.Tip.BlockNumber)
		spend = ledger.TxIn{TxID: block.HashBytes(encodeTx(tx))}
		parent = blk.Header
	}
	faulttest.Exit(db.Close())
}
