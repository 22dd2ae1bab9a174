package leiosdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// DB is an open LeiosDB. All methods are safe for concurrent use. Readers
// run concurrently with each other and with the (serialized) writers.
type DB struct {
	opts      Options
	dir       string
	store     *pebble.DB
	cache     *pebble.Cache
	writeOpts *pebble.WriteOptions
	log       *slog.Logger

	// closeMu is held for reading by every operation and for writing by
	// Close, so Pebble is never used after it is closed.
	closeMu sync.RWMutex
	closed  bool // guarded by closeMu

	// writeMu serializes writers. A writer reads, builds one batch, commits
	// it and publishes its events while holding writeMu, so its reads are not
	// stale when it commits and events leave in commit order.
	// Lock order: closeMu, then writeMu, then subs.mu.
	writeMu sync.Mutex

	subs subscribers
}

// reader is what both the DB, a snapshot and an indexed batch offer.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// Open opens (creating if needed) the LeiosDB in dir.
func Open(dir string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("leiosdb: %w", err)
	}
	cache := pebble.NewCache(opts.CacheBytes)
	store, err := pebble.Open(dir, opts.pebbleOptions(cache))
	if err != nil {
		cache.Unref()
		return nil, fmt.Errorf("leiosdb: open %s: %w", dir, err)
	}
	db := &DB{
		opts:      opts,
		dir:       dir,
		store:     store,
		cache:     cache,
		writeOpts: pebble.NoSync,
		log:       opts.Logger.With("component", "leiosdb"),
	}
	if opts.SyncWrites {
		db.writeOpts = pebble.Sync
	}
	if err := db.checkSchema(); err != nil {
		_ = store.Close()
		cache.Unref()
		return nil, err
	}
	return db, nil
}

// checkSchema stamps a new store with the schema version and refuses a
// store written with another layout.
func (db *DB) checkSchema() error {
	v, ok, err := getCopy(db.store, schemaKey)
	if err != nil {
		return fmt.Errorf("leiosdb: read schema: %w", err)
	}
	if !ok {
		return db.store.Set(schemaKey, binary.AppendUvarint(nil, schemaVersion), pebble.Sync)
	}
	if got, n := binary.Uvarint(v); n != len(v) || got != schemaVersion {
		return fmt.Errorf("%w: schema %x, want version %d", ErrCorrupt, v, schemaVersion)
	}
	return nil
}

// Close closes the store and every subscription. Operations after Close
// return ErrClosed.
func (db *DB) Close() error {
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
