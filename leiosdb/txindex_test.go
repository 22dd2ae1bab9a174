package leiosdb

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
)

// TestReopenRebuildsWhatBodiesMiss: which txs held bodies miss is kept in
// memory only; after a restart the closures still complete as their txs
// arrive, shared txs discharging every body that names them.
func TestReopenRebuildsWhatBodiesMiss(t *testing.T) {
	dir := t.TempDir()
	txs := [][]byte{blocktest.Tx(1, 200), blocktest.Tx(2, 300), blocktest.Tx(3, 400)}
	first, second := testBody(t, txs[:2]), testBody(t, txs[1:])
	db, err := Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	announceAndStore(t, db, pointOf(1, first), first)
	announceAndStore(t, db, pointOf(2, second), second)
	if _, err := db.InsertTxs(block.HashTxs(txs[:1])); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustConsistent(t, db)
	if missing, err := db.Missing(pointOf(2, second)); err != nil || !slices.Equal(missing, []int{0, 1}) {
		t.Fatalf("second body misses %v (%v), want offsets 0 and 1", missing, err)
	}
	res, err := db.InsertTxs(block.HashTxs(txs[1:2])) // named by both bodies
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Completed) != 1 || res.Completed[0].Point != pointOf(1, first) || res.Stored != 1 {
		t.Fatalf("the shared tx: %+v, want the first closure completed", res)
	}
	if res, err = db.InsertTxs(block.HashTxs(txs[2:])); err != nil || len(res.Completed) != 1 {
		t.Fatalf("the last tx: %+v %v, want the second closure completed", res, err)
	}
	mustConsistent(t, db)
}

// TestSchemaOneStoreIsMigrated: a store of schema 1 kept the txs bodies
// miss as 'w' entries; Open deletes them, writes schema 2 and rebuilds
// them in memory.
func TestSchemaOneStoreIsMigrated(t *testing.T) {
	dir := t.TempDir()
	txs := [][]byte{blocktest.Tx(1, 200), blocktest.Tx(2, 300)}
	eb := testBody(t, txs)
	db, err := Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	announceAndStore(t, db, pointOf(1, eb), eb)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Make it a schema 1 store: its version, and its 'w' entries.
	raw, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		t.Fatal(err)
	}
	b := raw.NewBatch()
	_ = b.Set(schemaKey, binary.AppendUvarint(nil, schemaWithWants), nil)
	for i, tx := range txs {
		h, ebHash := block.HashBytes(tx), eb.Hash()
		k := append(append([]byte{prefixWant}, h[:]...), ebHash[:]...)
		_ = b.Set(k, binary.AppendUvarint(binary.AppendUvarint(nil, uint64(i)), uint64(len(tx))), nil)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, Options{Logger: quietLogger()}); err != nil {
		t.Fatalf("a schema 1 store is checked as one: %v", err)
	}

	db, err = Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustConsistent(t, db) // no 'w' entry is left in a schema 2 store
	if v, _, err := getCopy(db.store, schemaKey); err != nil || binary.AppendUvarint(nil, schemaVersion)[0] != v[0] {
		t.Fatalf("schema after Open: %x (%v), want %d", v, err, schemaVersion)
	}
	res, err := db.InsertTxs(block.HashTxs(txs))
	if err != nil || len(res.Completed) != 1 {
		t.Fatalf("the txs of the migrated store's body: %+v %v, want its closure completed", res, err)
	}
}

// TestIndexHoldsOnlyTheVolatileWindow: the certified closures are kept
// for good, and the memory must not be. A tx only promoted bodies name
// leaves the index but stays stored; one a volatile body also names stays
// until that body is dropped; a later body naming a certified tx finds it
// stored, and its count right.
func TestIndexHoldsOnlyTheVolatileWindow(t *testing.T) {
	db := openTestDB(t, Options{})
	inMemory := func() int {
		db.txs.mu.RLock()
		defer db.txs.mu.RUnlock()
		return len(db.txs.txs)
	}
	txs := [][]byte{blocktest.Tx(1, 200), blocktest.Tx(2, 300), blocktest.Tx(3, 400)}
	certified, other := testBody(t, txs[:2]), testBody(t, txs[1:])
	announceAndStore(t, db, pointOf(1, certified), certified)
	announceAndStore(t, db, pointOf(2, other), other)
	if _, err := db.InsertTxs(block.HashTxs(txs)); err != nil {
		t.Fatal(err)
	}
	if n := inMemory(); n != 3 {
		t.Fatalf("%d txs in memory, want the 3 the volatile bodies name", n)
	}
	if err := db.Promote(pointOf(1, certified)); err != nil {
		t.Fatal(err)
	}
	mustConsistent(t, db)
	if n := inMemory(); n != 2 {
		t.Fatalf("%d txs in memory after the promotion, want the 2 the other body names", n)
	}
	if _, err := db.GC(3); err != nil { // drops the other body
		t.Fatal(err)
	}
	mustConsistent(t, db)
	if n := inMemory(); n != 0 {
		t.Fatalf("%d txs in memory with no volatile body, want 0", n)
	}
	hashes := make([]block.Hash, len(txs))
	for i, tx := range txs {
		hashes[i] = block.HashBytes(tx)
	}
	out := make([]bool, len(txs))
	if n, err := db.HasTxs(hashes, out); err != nil || n != 2 || !out[0] || !out[1] || out[2] {
		t.Fatalf("HasTxs = %d %v %v, want the certified closure's 2 txs held", n, out, err)
	}

	// A body naming a certified tx again: stored, counted once more.
	again := testBody(t, txs[:1])
	if c := announceAndStore(t, db, pointOf(5, again), again); !c.Complete() {
		t.Fatalf("a body of a stored tx: %+v, want complete", c)
	}
	mustConsistent(t, db)
	if _, err := db.GC(6); err != nil {
		t.Fatal(err)
	}
	mustConsistent(t, db)
	if closure, err := db.Closure(certified.Hash()); err != nil || len(closure) != 2 {
		t.Fatalf("the certified closure after its tx was named and dropped again: %d txs, %v", len(closure), err)
	}
}
