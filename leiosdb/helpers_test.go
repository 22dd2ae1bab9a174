package leiosdb

import (
	"io"
	"log/slog"
	"testing"

	"github.com/leiosnode/leiosnode/block"
)

// quietLogger keeps Pebble's and the store's messages out of test output.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openTestDB(t testing.TB, opts Options) *DB {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	if opts.CacheBytes == 0 {
		opts.CacheBytes = 8 << 20
	}
	if opts.MemTableBytes == 0 {
		opts.MemTableBytes = 4 << 20
	}
	db, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// testBody builds the EB body naming txs, in order, in the encoding of
// block.DefaultEBLimits, the stores' default.
func testBody(t testing.TB, txs [][]byte) *block.EBBody {
	t.Helper()
	return testBodyIn(t, block.DefaultEBLimits.Encoding, txs)
}

// testBodyIn is testBody in encoding enc.
func testBodyIn(t testing.TB, enc block.Encoding, txs [][]byte) *block.EBBody {
	t.Helper()
	entries := make([]block.EBTx, len(txs))
	for i, tx := range txs {
		entries[i] = block.EBTx{TxHash: block.HashBytes(tx), Size: uint32(len(tx))}
	}
	eb, err := block.NewEBBody(entries, block.EBLimits{MaxBodyBytes: 1 << 30, MaxClosureBytes: 1 << 40, MaxTxs: 1 << 30, Encoding: enc})
	if err != nil {
		t.Fatal(err)
	}
	return eb
}

func pointOf(slot uint64, eb *block.EBBody) block.Point {
	return block.Point{Slot: slot, Hash: eb.Hash()}
}

// announceAndStore inserts the point and its body.
func announceAndStore(t testing.TB, db *DB, p block.Point, eb *block.EBBody) Completion {
	t.Helper()
	if err := db.InsertPoint(p, eb.Size()); err != nil {
		t.Fatal(err)
	}
	c, err := db.InsertBody(p, eb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustConsistent(t testing.TB, db *DB) {
	t.Helper()
	if err := db.CheckConsistency(); err != nil {
		t.Fatal(err)
	}
}

func mustInfo(t testing.TB, db *DB, p block.Point) PointInfo {
	t.Helper()
	info, ok, err := db.PointInfo(p)
	if err != nil || !ok {
		t.Fatalf("PointInfo(%s) = %v, %v", p, ok, err)
	}
	return info
}

// refcount is the number of volatile bodies that hold tx (0 when the
// index does not hold it).
func refcount(t testing.TB, db *DB, tx []byte) uint64 {
	t.Helper()
	db.txs.mu.RLock()
	defer db.txs.mu.RUnlock()
	return db.txs.txs[block.HashBytes(tx)].Volatile
}

// drain returns the events buffered in ch.
func drain(ch <-chan Event) []Event {
	var events []Event
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return events
			}
			events = append(events, e)
		default:
			return events
		}
	}
}
