package chaindb

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
)

// DB is the chain database: the RB store, chain selection, the immutable tip
// and the LedgerDB. All methods are safe for concurrent use.
type DB struct {
	opts  Options
	log   *slog.Logger
	store *pebble.DB

	// addMu serializes the writers: AddBlock, Reselect and Close. Only they
	// write the fields under mu, and only while also holding mu, so holding
	// addMu alone is enough to read them. invalid is the writers' alone.
	addMu   sync.Mutex
	invalid map[block.Hash]uint64 // blocks known invalid → their block number

	// mu guards the published state. Readers hold it shared; AddBlock holds
	// it exclusively only to commit a batch and swap in the new state, so a
	// LedgerView's Pebble snapshot and diff list are always taken together.
	// Lock order: addMu, mu, regMu, then a Follower's or LedgerView's own lock.
	mu         sync.RWMutex
	closed     bool
	root       *node                // the immutable tip; the backing store is the UTxO after it
	rootTxs    uint64               // txs on the chain from origin through root
	nodes      map[block.Hash]*node // the volatile tree, root included
	selected   []*node              // the selected chain after root, oldest first: selected[i].number == root.number+1+i
	tipChanged chan struct{}        // closed and replaced at every selection change
	done       chan struct{}        // closed by Close

	// regMu guards the registries of open followers and views; it is taken
	// with mu held (shared or exclusive) or with no lock at all.
	regMu     sync.Mutex
	followers map[*Follower]struct{}
	views     map[*LedgerView]struct{}
}

// Open opens (creating if needed) the database in dir, replays the volatile
// blocks to rebuild the ledger diffs, and returns it ready for AddBlock.
func Open(dir string, opts Options) (*DB, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	cache := pebble.NewCache(cacheBytes)
	defer cache.Unref() // Pebble holds its own reference.
	store, err := pebble.Open(dir, pebbleOptions(opts, cache))
	if err != nil {
		return nil, fmt.Errorf("chaindb: open %s: %w", dir, err)
	}
	db := &DB{
		opts:       opts,
		log:        opts.Logger,
		store:      store,
		invalid:    map[block.Hash]uint64{},
		nodes:      map[block.Hash]*node{},
		tipChanged: make(chan struct{}),
		done:       make(chan struct{}),
		followers:  map[*Follower]struct{}{},
		views:      map[*LedgerView]struct{}{},
	}
	if err := db.load(); err != nil {
		store.Close()
		return nil, err
	}
	db.log.Info("chaindb opened", "tip", db.tip(), "immutable", db.root.tip(), "k", opts.K)
	return db, nil
}

// Close closes every open follower and view and then the database. AddBlock
// calls in progress finish first. Closing twice is a no-op.
func (db *DB) Close() error {
	db.addMu.Lock()
	defer db.addMu.Unlock()
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	close(db.done)
	db.regMu.Lock()
	for v := range db.views {
		v.release()
	}
	clear(db.views)
	clear(db.followers)
	db.regMu.Unlock()
	if err := db.store.Close(); err != nil {
		return fmt.Errorf("chaindb: close: %w", err)
	}
	return nil
}

// tip is the tip of the selected chain. Callers hold mu or addMu.
func (db *DB) tip() block.Tip { return db.tipNode().tip() }

func (db *DB) tipNode() *node {
	if len(db.selected) == 0 {
		return db.root
	}
	return db.selected[len(db.selected)-1]
}

// onSelected reports whether n is the root or on the selected chain after
// it. Callers hold mu or addMu.
func (db *DB) onSelected(n *node) bool {
	if n == db.root {
		return true
	}
	if n.number <= db.root.number {
		return false
	}
	i := n.number - db.root.number - 1
	return i < uint64(len(db.selected)) && db.selected[i] == n
}
