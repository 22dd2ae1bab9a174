package chaindb

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
)

// DB is the chain database: the RB store, chain selection, the immutable tip
// and the LedgerDB. All methods are safe for concurrent use.
type DB struct {
	opts      Options
	log       *slog.Logger
	store     *pebblestore.DB     // writes go through its Commit
	immutable *pebblestore.Marker // the immutable tip, outside Pebble (immutable.go)

	// addMu serializes the writers: AddBlock, Reselect and Close. Only they
	// write the fields under mu, and only while also holding mu, so holding
	// addMu alone is enough to read them. invalid is the writers' alone.
	addMu   sync.Mutex
	invalid map[block.Hash]uint64 // blocks known invalid → their block number

	// mu guards the published state. Readers hold it shared; AddBlock holds
	// it exclusively only to commit a batch and swap in the new state, so a
	// LedgerView's Pebble snapshot and diff list are always taken together.
	// Lock order: addMu, mu, regMu, then a Follower's or LedgerView's own lock.
	mu          sync.RWMutex
	closed      bool
	root        *node                // the immutable tip; the backing store is the UTxO after it
	rootTxs     uint64               // txs on the chain from origin through root
	rootCertRBs uint64               // CertRBs on the chain from origin through root
	nodes       map[block.Hash]*node // the volatile tree, root included
	selected    []*node              // the selected chain after root, oldest first: selected[i].number == root.number+1+i
	tipChanged  chan struct{}        // closed and replaced at every selection change
	done        chan struct{}        // closed by Close

	// regMu guards the registries of open followers and views; it is taken
	// with mu held (shared or exclusive) or with no lock at all.
	regMu     sync.Mutex
	followers map[*Follower]struct{}
	views     map[*LedgerView]struct{}
}

// Open opens the database in dir, replays the volatile blocks to rebuild
// the ledger diffs, and returns it ready for AddBlock. It creates one, with
// the genesis UTxO, only if dir is missing or empty; a database that
// cannot be opened as it was written, that belongs to another network
// than Options.Network, or whose immutable tip went back is an error (a
// *pebblestore.Error that says what to do), found with the database
// opened read-only (checkStored): a refused database is left as it was.
func Open(dir string, opts Options) (*DB, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.ApplyBlock == nil {
		return nil, errors.New("chaindb: Options.ApplyBlock is required")
	}
	store, err := openStore(dir, opts, false)
	if err != nil {
		return nil, err
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
		db.closeStore()
		return nil, cmp.Or(db.Err(), err) // a corrupt block read says which file
	}
	if opts.Registerer != nil {
		if err := db.registerMetrics(opts.Registerer); err != nil {
			db.closeStore()
			return nil, err
		}
	}
	db.log.Info("chaindb opened", "tip", db.tip(), "immutable", db.root.tip(), "k", opts.K)
	return db, nil
}

// Close closes every open follower and view and then the database. AddBlock
// calls in progress finish first. Closing twice is a no-op. A database that
// failed is left as it is and Close returns its failure at once: a call
// may be stuck inside the write that failed (pebblestore.DB.Abandoned).
func (db *DB) Close() error {
	if db.store.Abandoned() {
		return db.store.Close() // its fault, once it removed the tables it left empty
	}
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
	if err := db.closeStore(); err != nil {
		return fmt.Errorf("chaindb: close: %w", err)
	}
	return nil
}

// openStore opens the Pebble store in dir, a new one with the genesis UTxO
// and the origin markers; a stored one is checked read-only first
// (checkStored).
func openStore(dir string, opts Options, readOnly bool) (*pebblestore.DB, error) {
	cache := pebble.NewCache(cacheBytes)
	defer cache.Unref() // Pebble holds its own reference.
	return pebblestore.Open(dir, pebblestore.Options{
		Name:       "chain database",
		Pebble:     pebbleOptions(opts, cache),
		Network:    opts.Network,
		NetworkKey: keyNetwork,
		Init:       func(b *pebble.Batch) error { writeGenesis(b, opts.GenesisUTxO); return nil },
		Check: func(s *pebblestore.DB) error {
			return (&DB{opts: opts, log: opts.Logger, store: s}).checkStored()
		},
		ReadOnly: readOnly,
		Logger:   opts.Logger,
	})
}

// CheckOpen reports what Open would refuse the database in dir for, without
// writing to it: nil if Open would open it, or create it (dir missing or
// empty). The node calls it before it opens its LeiosDB for writing, so a
// refused chain leaves both stores as they were.
func CheckOpen(dir string, opts Options) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	if absent, err := pebblestore.Absent(opts.fs, dir); err != nil || absent {
		return err
	}
	store, err := openStore(dir, opts, true)
	if err != nil {
		return err
	}
	return store.Close()
}

func (db *DB) closeStore() error {
	var err error
	if db.immutable != nil {
		err = db.immutable.Close()
	}
	return errors.Join(err, db.store.Close())
}

// WriteStalls returns how many times Pebble held back every write of the
// store since it opened, its memtables or level 0 too full, and for how
// long in all.
func (db *DB) WriteStalls() (count uint64, total time.Duration) { return db.store.WriteStalls() }

// Failed is closed when the database has failed: a write found the disk
// full, or Pebble found it corrupt. Err says what happened; writes return
// it from then on.
func (db *DB) Failed() <-chan struct{} { return db.store.Failed() }

// Err is the database's failure, or nil (see Failed).
func (db *DB) Err() error { return db.store.Err() }

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
