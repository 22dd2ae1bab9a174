package leiosdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/internal/pebblestore"
)

// DB is an open LeiosDB. All methods are safe for concurrent use. Readers
// run concurrently with each other and with the (serialized) writers.
type DB struct {
	opts      Options
	dir       string
	store     *pebblestore.DB // writes go through its Commit
	cache     *pebble.Cache
	writeOpts *pebble.WriteOptions
	log       *slog.Logger
	readOnly  bool // opened for a check: no writes, no index of stored txs

	// closeMu is held for reading by every operation and for writing by
	// Close, so Pebble is never used after it is closed.
	closeMu sync.RWMutex
	closed  bool // guarded by closeMu

	// writeMu serializes writers. A writer reads, builds one batch, commits
	// it and publishes its events while holding writeMu, so its reads are not
	// stale when it commits and events leave in commit order.
	// Lock order: closeMu, then writeMu, then subs.mu.
	writeMu sync.Mutex

	// txs is the 't' keyspace in memory (txindex.go), loaded on first use:
	// by Open, so that no writer pays for it; never by the read-only
	// opens of the checks, which do not need it.
	txsOnce sync.Once
	txs     *txIndex
	txsErr  error

	subs subscribers
}

// reader is what both the DB, a snapshot and an indexed batch offer.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// Open opens the LeiosDB in dir. It creates one only if dir is missing or
// empty; a store that cannot be opened as it was written, or that
// belongs to another network than Options.Network, is an error (a
// *pebblestore.Error that says what to do), found with the store opened
// read-only: a refused store is left as it was.
func Open(dir string, opts Options) (*DB, error) {
	db, err := open(dir, opts, false)
	if err != nil {
		return nil, err
	}
	if err := db.migrate(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := db.loadIndex(); err != nil {
		// The store's fault: one line that names the file and says what
		// to do, which Close returns again.
		fault := db.store.Fail(err)
		if cerr := db.Close(); cerr != nil && cerr != fault {
			return nil, errors.Join(fault, cerr)
		}
		return nil, fault
	}
	if opts.Registerer != nil {
		if err := db.registerMetrics(opts.Registerer); err != nil {
			return nil, errors.Join(err, db.Close())
		}
	}
	return db, nil
}

func open(dir string, opts Options, readOnly bool) (*DB, error) {
	opts = opts.withDefaults()
	cache := pebble.NewCache(opts.CacheBytes)
	store, err := pebblestore.Open(dir, pebblestore.Options{
		Name:       "LeiosDB",
		Pebble:     opts.pebbleOptions(cache),
		Network:    opts.Network,
		NetworkKey: networkKey,
		Init: func(b *pebble.Batch) error {
			return b.Set(schemaKey, binary.AppendUvarint(nil, schemaVersion), nil)
		},
		Check:    checkSchema,
		ReadOnly: readOnly,
		Logger:   opts.Logger,
	})
	if err != nil {
		cache.Unref()
		return nil, err
	}
	db := &DB{
		opts:      opts,
		dir:       dir,
		store:     store,
		cache:     cache,
		writeOpts: pebble.NoSync,
		readOnly:  readOnly,
		log:       opts.Logger.With("component", "leiosdb"),
	}
	if opts.SyncWrites {
		db.writeOpts = pebble.Sync
	}
	return db, nil
}

// CheckOpen reports what Open would refuse the store in dir for, without
// writing to it: nil if Open would open it, or create it (dir missing or
// empty).
func CheckOpen(dir string, opts Options) error {
	if absent, err := pebblestore.Absent(opts.fs, dir); err != nil || absent {
		return err
	}
	db, err := open(dir, opts, true)
	if err != nil {
		return err
	}
	return db.Close()
}

// checkSchema refuses a store written with another layout, before Open
// writes to it (pebblestore.Options.Check). A new store was stamped with
// the version in its first batch.
func checkSchema(s *pebblestore.DB) error {
	v, ok, err := getCopy(s, schemaKey)
	if err != nil {
		return fmt.Errorf("leiosdb: read schema: %w", err)
	}
	if got, n := binary.Uvarint(v); !ok || n != len(v) || got < 1 || got > schemaVersion {
		return s.Corrupt(fmt.Errorf("%w: schema %x, want version %d", ErrCorrupt, v, schemaVersion))
	}
	return nil
}

// Close closes the store and every subscription. Operations after Close
// return ErrClosed. A store that failed is left as it is and Close returns
// its failure at once: a writer may be stuck inside the write that failed
// (pebblestore.DB.Abandoned).
func (db *DB) Close() error {
	if db.store.Abandoned() {
		return db.store.Close() // its fault, once it removed the tables it left empty
	}
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	db.subs.closeAll()
	err := db.store.Close()
	db.cache.Unref()
	if err != nil {
		return fmt.Errorf("leiosdb: close: %w", err)
	}
	return nil
}

// WriteStalls returns how many times Pebble held back every write of the
// store since it opened, its memtables or level 0 too full, and for how
// long in all.
func (db *DB) WriteStalls() (count uint64, total time.Duration) { return db.store.WriteStalls() }

// Failed is closed when the store has failed: a write found the disk full,
// or Pebble found it corrupt. Err says what happened; writes return it
// from then on.
func (db *DB) Failed() <-chan struct{} { return db.store.Failed() }

// Err is the store's failure, or nil (see Failed).
func (db *DB) Err() error { return db.store.Err() }

// Dir is the directory the store lives in.
func (db *DB) Dir() string { return db.dir }

// beginRead guards a read against Close. The caller must call the returned
// function when done.
func (db *DB) beginRead() (func(), error) {
	db.closeMu.RLock()
	if db.closed {
		db.closeMu.RUnlock()
		return nil, ErrClosed
	}
	return db.closeMu.RUnlock, nil
}

// beginSnapshot is beginRead with one snapshot of the store: every read
// of a call sees one state (GC cannot take a body's txs between its
// reads). The caller must call done when finished.
func (db *DB) beginSnapshot() (snap *pebble.Snapshot, done func(), err error) {
	release, err := db.beginRead()
	if err != nil {
		return nil, nil, err
	}
	snap = db.store.NewSnapshot()
	return snap, func() { snap.Close(); release() }, nil
}

// migrate brings a store of schema 1 or 2 to this one, in one batch:
// those kept a reference count of every stored tx ('t') and schema 1 the
// txs bodies missed ('w'), which the index now holds in memory; the txs of
// the promoted bodies get their pins ('r').
func (db *DB) migrate() error {
	v, _, err := getCopy(db.store, schemaKey)
	if err != nil {
		return fmt.Errorf("leiosdb: read schema: %w", err)
	}
	from, _ := binary.Uvarint(v)
	if from == schemaVersion {
		return nil
	}
	b := db.store.NewBatch()
	defer b.Close()
	err = scanPrefix(db.store, []byte{prefixPoint}, func(k, v []byte) (bool, error) {
		rec, err := decodePointRecord(v)
		if err != nil || !rec.Promoted {
			return true, err
		}
		eb := parsePointKey(k).Hash
		if _, held, err := readBodyState(db.store, eb); err != nil || !held {
			return true, err
		}
		txs, err := bodyEntries(db.store, eb)
		for _, tx := range txs {
			stored, err := has(db.store, hashKey(prefixTx, tx.TxHash))
			if err != nil {
				return false, err
			}
			if stored {
				_ = b.Set(hashKey(prefixPin, tx.TxHash), nil, nil)
			}
		}
		return true, err
	})
	if err != nil {
		return fmt.Errorf("leiosdb: migrating schema %d to %d: %w", from, schemaVersion, err)
	}
	_ = b.DeleteRange([]byte{prefixTxRef}, []byte{prefixTxRef + 1}, nil)
	_ = b.DeleteRange([]byte{prefixWant}, []byte{prefixWant + 1}, nil)
	_ = b.Set(schemaKey, binary.AppendUvarint(nil, schemaVersion), nil)
	if err := db.store.Commit(b, pebble.Sync); err != nil {
		return fmt.Errorf("leiosdb: migrating schema %d to %d: %w", from, schemaVersion, err)
	}
	return nil
}

// loadIndex builds the index of the volatile window's txs, and sets the
// missing count of each body whose count says otherwise to what it
// misses: a tx kept only for a certified closure that the body also names
// is missing for it (txIndex), and was not counted so by the store of
// schema 2.
func (db *DB) loadIndex() error {
	index, recount, err := loadTxIndex(db.store)
	if err != nil {
		return err
	}
	if len(recount) > 0 {
		b := db.store.NewBatch()
		defer b.Close()
		for eb, missing := range recount {
			state, _, err := readBodyState(db.store, eb)
			if err != nil {
				return err
			}
			state.Missing = missing
			_ = b.Set(hashKey(prefixBodyState, eb), state.encode(), nil)
		}
		if err := db.store.Commit(b, pebble.Sync); err != nil {
			return err
		}
	}
	db.txsOnce.Do(func() { db.txs = index })
	return nil
}

// txIndex is the index of the volatile window's txs: Open's, or for a
// store opened read-only, read on first use.
func (db *DB) txIndex() (*txIndex, error) {
	db.txsOnce.Do(func() { db.txs, _, db.txsErr = loadTxIndex(db.store) })
	return db.txs, db.txsErr
}

// beginWrite is beginRead plus the writer lock.
func (db *DB) beginWrite() (func(), error) {
	done, err := db.beginRead()
	if err != nil {
		return nil, err
	}
	db.writeMu.Lock()
	return func() { db.writeMu.Unlock(); done() }, nil
}

// getCopy returns a copy of key's value, or ok == false if it is absent.
func getCopy(r reader, key []byte) (value []byte, ok bool, err error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	value = append([]byte(nil), v...)
	return value, true, closer.Close()
}

// has reports whether key is present.
func has(r reader, key []byte) (bool, error) {
	_, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, closer.Close()
}

// scanPrefix calls fn for every key (and value, valid only during the call)
// starting with prefix, in order, until fn returns false.
func scanPrefix(r reader, prefix []byte, fn func(key, value []byte) (bool, error)) error {
	return scanRange(r, prefix, prefixEnd(prefix), fn)
}

func scanRange(r reader, lower, upper []byte, fn func(key, value []byte) (bool, error)) (err error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		more, err := fn(it.Key(), v)
		if err != nil || !more {
			return err
		}
	}
	return it.Error()
}
