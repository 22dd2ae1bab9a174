package chaindb

import (
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/leiosnode/leiosnode/internal/pebblestore"
)

// TestCheck: Check passes a database that AddBlock wrote, refuses one
// whose selected chain lost a block of its number index, and does not
// check one a node holds open.
func TestCheck(t *testing.T) {
	const k = 3
	fs := vfs.NewMem()
	opts := testOptions(k, testGenesis(2), fs)
	db := mustOpen(t, "db", opts)
	f := newForger()
	chain := f.chain(nil, 8)
	mustAdd(t, db, chain...)
	mustAdd(t, db, f.chain(chain[5].Header, 1)...) // a fork block in the volatile index
	if err := Check("db", opts); err == nil {
		t.Error("checked a database held open")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check("db", opts); err != nil {
		t.Fatalf("a good database: %v", err)
	}

	p, err := pebble.Open("db", &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(numberKey(3), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	p.Close()
	err = Check("db", opts)
	if !errors.Is(err, pebblestore.ErrCorrupt) || !strings.Contains(err.Error(), "selected block #3") {
		t.Errorf("a chain with a hole: %v", err)
	}
}
