package fetch

import (
	"encoding/binary"
	"io"
	"log/slog"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testLimits admit the small EBs of the tests and full-size ones.
var testLimits = block.DefaultEBLimits

// openDB opens a LeiosDB in dir with small caches, closed when the test
// ends.
func openDB(tb testing.TB, dir string) *leiosdb.DB {
	tb.Helper()
	db, err := leiosdb.Open(dir, leiosdb.Options{CacheBytes: 4 << 20, MemTableBytes: 2 << 20, Logger: quietLogger()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return db
}

// storeEB puts eb at slot into db with the given txs of its closure, as a
// node's handlers would.
func storeEB(tb testing.TB, db *leiosdb.DB, slot uint64, eb *testEB, txs [][]byte) {
	tb.Helper()
	p := eb.point(slot)
	if err := db.InsertPoint(p, eb.body.Size()); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.InsertBody(p, eb.body.Bytes()); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.InsertTxs(txs); err != nil {
		tb.Fatal(err)
	}
}

// testTx is a deterministic tx of size bytes; distinct seeds give distinct
// txs. Nothing here parses tx bytes.
func testTx(seed uint64, size int) []byte {
	tx := make([]byte, max(size, 8))
	binary.BigEndian.PutUint64(tx, seed)
	for i := 8; i < len(tx); i++ {
		tx[i] = byte(seed*31 + uint64(i))
	}
	return tx
}

// testEB is an EB with its closure.
type testEB struct {
	body *block.EBBody
	txs  [][]byte // in body order
}

func (eb *testEB) point(slot uint64) block.Point {
	return block.Point{Slot: slot, Hash: eb.body.Hash()}
}

func (eb *testEB) ann() block.Announcement { return eb.body.Announcement() }

// fataler is the part of testing.TB (and rapid.T) the helpers need.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// makeEB builds the EB of the txs with the given seeds, each size bytes.
func makeEB(tb fataler, size int, seeds ...uint64) *testEB {
	tb.Helper()
	eb := &testEB{}
	entries := make([]block.EBTx, len(seeds))
	for i, s := range seeds {
		tx := testTx(s, size)
		eb.txs = append(eb.txs, tx)
		entries[i] = block.EBTx{TxHash: block.HashBytes(tx), Size: uint32(len(tx))}
	}
	body, err := block.NewEBBody(entries, testLimits)
	if err != nil {
		tb.Fatal(err)
	}
	eb.body = body
	return eb
}

func seeds(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s < to; s++ {
		out = append(out, s)
	}
	return out
}

func peerID(name string) peer.ID { return peer.ID("peer-" + name) }

func seedsInt(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
