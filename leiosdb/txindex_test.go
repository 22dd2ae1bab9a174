package leiosdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
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

// TestOlderSchemasAreMigrated: stores of schema 1 and 2 kept a reference
// count of every stored tx ('t'), and schema 1 the txs bodies missed
// ('w'); Open deletes both, pins the txs of the promoted bodies, writes
// schema 3, and rebuilds the rest in memory.
func TestOlderSchemasAreMigrated(t *testing.T) {
	for _, schema := range []uint64{1, 2} {
		t.Run(fmt.Sprintf("schema %d", schema), func(t *testing.T) {
			dir := t.TempDir()
			txs := [][]byte{blocktest.Tx(1, 200), blocktest.Tx(2, 300), blocktest.Tx(3, 400)}
			certified, volatile := testBody(t, txs[:2]), testBody(t, txs[1:])
			db, err := Open(dir, Options{Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			announceAndStore(t, db, pointOf(1, certified), certified)
			if _, err := db.InsertTxs(block.HashTxs(txs[:2])); err != nil {
				t.Fatal(err)
			}
			announceAndStore(t, db, pointOf(2, volatile), volatile) // misses the third tx
			if err := db.Promote(pointOf(1, certified)); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			// Write it as the older schema did: no pins, a count a tx.
			raw, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest})
			if err != nil {
				t.Fatal(err)
			}
			b := raw.NewBatch()
			_ = b.Set(schemaKey, binary.AppendUvarint(nil, schema), nil)
			_ = b.DeleteRange([]byte{prefixPin}, []byte{prefixPin + 1}, nil)
			for i, refs := range []uint64{1, 2} {
				count := binary.AppendUvarint(binary.AppendUvarint(nil, refs), uint64(len(txs[i])))
				_ = b.Set(hashKey(prefixTxRef, block.HashBytes(txs[i])), count, nil)
			}
			if schema == 1 {
				h, eb := block.HashBytes(txs[2]), volatile.Hash()
				_ = b.Set(append(append([]byte{prefixWant}, h[:]...), eb[:]...), binary.AppendUvarint([]byte{1}, 400), nil)
			}
			if err := b.Commit(pebble.Sync); err != nil {
				t.Fatal(err)
			}
			if err := raw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := Check(dir, Options{Logger: quietLogger()}); err != nil {
				t.Fatalf("a schema %d store is checked as one: %v", schema, err)
			}

			db, err = Open(dir, Options{Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustConsistent(t, db) // pins in place, no 't' or 'w' entry left
			if v, _, err := getCopy(db.store, schemaKey); err != nil || !bytes.Equal(v, binary.AppendUvarint(nil, schemaVersion)) {
				t.Fatalf("schema after Open: %x (%v), want %d", v, err, schemaVersion)
			}
			res, err := db.InsertTxs(block.HashTxs(txs[2:]))
			if err != nil || len(res.Completed) != 1 {
				t.Fatalf("the missing tx of the migrated store's volatile body: %+v %v, want its closure completed", res, err)
			}
			if _, err := db.GC(3); err != nil { // drops the volatile body
				t.Fatal(err)
			}
			mustConsistent(t, db)
			if closure, err := db.Closure(certified.Hash()); err != nil || len(closure) != 2 {
				t.Fatalf("the certified closure after the migration and a GC: %d txs, %v", len(closure), err)
			}
		})
	}
}

// TestIndexHoldsOnlyTheVolatileWindow: the certified closures are kept
// for good, and the memory must not be. A tx only promoted bodies name
// leaves the index but stays stored, pinned; one a volatile body also
// names stays until that body is dropped; a later body naming a certified
// tx misses it, and dropping that body leaves the tx.
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

	// A body naming a certified tx again (an invalid EB: the tx is on the
	// immutable chain) misses it, is completed by it, and its drop leaves
	// the tx to the certified closure.
	again := testBody(t, txs[:1])
	if c := announceAndStore(t, db, pointOf(5, again), again); c.Missing != 1 {
		t.Fatalf("a body of a tx kept for a certified closure: %+v, want it missing", c)
	}
	mustConsistent(t, db)
	if res, err := db.InsertTxs(block.HashTxs(txs[:1])); err != nil || len(res.Completed) != 1 {
		t.Fatalf("the certified tx sent again: %+v %v, want the body completed", res, err)
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
