package fetch

import (
	"io"
	"log/slog"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
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
func storeEB(tb testing.TB, db *leiosdb.DB, slot uint64, eb *blocktest.EB, txs [][]byte) {
	tb.Helper()
	p := eb.Point(slot)
	if err := db.InsertPoint(p, eb.Body.Size()); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.InsertBody(p, eb.Body.Bytes()); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.InsertTxs(block.HashTxs(txs)); err != nil {
		tb.Fatal(err)
	}
}

func peerID(name string) peer.ID { return peer.ID("peer-" + name) }

func seedsInt(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
