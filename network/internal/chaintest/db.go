package chaintest

import (
	"errors"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/network/chainsync"
)

// DB is a chain kept in a chaindb database, as a node keeps it: for the
// tests that depend on the store's own verdicts, such as a fork deeper
// than k. Its blocks carry no ledger: they apply to nothing.
type DB struct{ db *chaindb.DB }

var _ chainsync.NodeChain = (*DB)(nil)

// OpenDB opens an empty DB of security parameter k, closed when the test
// ends.
func OpenDB(tb testing.TB, k int) *DB {
	tb.Helper()
	db, err := chaindb.Open(tb.TempDir(), chaindb.Options{
		K: k,
		ApplyBlock: func(ledger.UTxO, *block.Block, *block.Header, bool) (*ledger.Diff, error) {
			return ledger.NewDiff(), nil
		},
		ValidateBlock: func(b *block.Block) error { return b.Header.VerifySignature() },
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return &DB{db}
}

// IsForkTooDeep is chainsync's Options.IsForkTooDeep for a DB.
func IsForkTooDeep(err error) bool { return errors.Is(err, chaindb.ErrForkTooDeep) }

func (d *DB) Tip() block.Tip          { return d.db.Tip() }
func (d *DB) ImmutableTip() block.Tip { return d.db.ImmutableTip() }
func (d *DB) FindIntersect(points []block.Point) (block.Point, bool) {
	return d.db.FindIntersect(points)
}
func (d *DB) NewFollower(from block.Point) (chainsync.Follower, error) { return d.db.NewFollower(from) }
func (d *DB) BlockByNumber(n uint64) (*block.Block, error)             { return d.db.BlockByNumber(n) }
func (d *DB) BlockRange(from, to block.Point) ([]*block.Block, error) {
	return d.db.BlockRange(from, to)
}

// AddBlock adds b, and fails as the store does.
func (d *DB) AddBlock(b *block.Block) error {
	_, err := d.db.AddBlock(b)
	return err
}
