package pebblestore

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Options say how to open a store.
type Options struct {
	// Name is how errors name the store ("chain database"). Required.
	Name string
	// Pebble are the store's own Pebble options (its caches, memtables,
	// filters). Open sets their FS (vfs.Default if nil), Logger,
	// EventListener, Lock, ErrorIfNotExists and ReadOnly. Required.
	Pebble *pebble.Options
	// Network is stamped on a new store and checked on an existing one.
	Network Network
	// NetworkKey is the key the stamp is kept under. Required.
	NetworkKey []byte
	// Init adds a new store's initial records to its first batch, which
	// also carries the stamp. May be nil.
	Init func(b *pebble.Batch) error
	// Check is the store's own checks of an existing store, run on it
	// opened read-only before it is opened for writing: what the store
	// refuses to open for (a missing record, a marker behind it) is found
	// before anything is written. Its error is returned as it is. May be
	// nil.
	Check func(s *DB) error
	// ReadOnly opens an existing store without writing to it (leiosnode db
	// check); a missing store is then an error.
	ReadOnly bool
	// Logger receives Pebble's messages: its routine ones at debug, its
	// errors at error. Default slog.Default().
	Logger *slog.Logger
}

// DB is an open store: a Pebble DB whose writes go through Commit.
type DB struct {
	*pebble.DB
	name, dir string
	fs        vfs.FS
	readOnly  bool
	lock      *pebble.Lock

	mu     sync.Mutex
	fault  *Error        // the first fault, or nil
	failed chan struct{} // closed with the first fault
	closed bool

	stalls stallClock // writes held back by Pebble: see WriteStalls

	// unfinished are the files Pebble created whose writes failed (a
	// table flushed as the disk filled), writingTables the tables it has
	// open for writing: removed once the store has a fault if empty
	// (removeUnfinished). unfinishedMu guards both.
	unfinishedMu  sync.Mutex
	unfinished    []string
	writingTables map[*watchedFile]struct{}
	// tableWrites is held shared by each write to a table and exclusively
	// by removeUnfinished, which then knows no write can fill a table it
	// removes: a table's writes check the fault under it.
	tableWrites sync.RWMutex
}

// Open opens the store in dir, creating it only if dir does not exist or
// is empty: a directory that holds anything is opened as an existing store
// and must carry a stamp of opts.Network.
//
// An existing store is first opened read-only, and checked there — its
// OPTIONS file, what Pebble checks at open, the stamp, opts.Check — before
// it is opened for writing: a store Open refuses is left byte for byte as
// it was. Pebble opened for writing flushes the write-ahead logs it
// replays into new tables, writes a new MANIFEST and OPTIONS file, and
// deletes every file its MANIFEST does not name: a MANIFEST cut short
// names none, and the refusal would come after the data was gone.
func Open(dir string, opts Options) (*DB, error) {
	po := opts.Pebble.Clone()
	if po.FS == nil {
		po.FS = vfs.Default
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	named := &DB{name: opts.Name, dir: dir, fs: po.FS, readOnly: opts.ReadOnly} // names the store in errors
	fresh, err := isFresh(po.FS, dir)
	if err != nil {
		return nil, named.errorOf(err)
	}
	if fresh && opts.ReadOnly {
		return nil, &Error{Store: named.name, Dir: dir, Err: errors.New("no store in the directory"),
			Do: "check databasePath in the node's config"}
	}
	if err := po.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, named.errorOf(err)
	}
	lock, err := pebble.LockDirectory(dir, po.FS)
	if err != nil {
		// A lock held elsewhere is the lock call's bare errno; a LOCK file
		// the node may not open is a *fs.PathError, a permission fault.
		var pathErr *fs.PathError
		if !errors.As(err, &pathErr) && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES)) {
			return nil, &Error{Store: named.name, Dir: dir, Err: fmt.Errorf("%w: %w", ErrInUse, err),
				Do: "another process holds its LOCK file: stop the leiosnode that runs on it, or give this one another databasePath"}
		}
		return nil, named.errorOf(err)
	}
	if !fresh {
		ro, err := openExisting(dir, opts, po, lock)
		if err != nil {
			lock.Close()
			return nil, err
		}
		if opts.ReadOnly {
			ro.lock = lock
			return ro, nil
		}
		if err := ro.DB.Close(); err != nil {
			lock.Close()
			return nil, ro.errorOf(err)
		}
	}
	s, err := openPebble(dir, opts, po, lock, false, fresh)
	if err == nil && fresh {
		if err = s.create(opts); err != nil {
			s.lock = lock
			s.Close()
			return nil, s.unreadable(err)
		}
	}
	if err != nil {
		if !s.Abandoned() {
			lock.Close()
		} // else the process exits holding it: Pebble may be stuck in the write
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// openExisting opens the existing store in dir read-only and checks it:
// everything Open can refuse a store for, found with nothing written.
func openExisting(dir string, opts Options, po *pebble.Options, lock *pebble.Lock) (*DB, error) {
	s := &DB{name: opts.Name, dir: dir, fs: po.FS, readOnly: true, failed: make(chan struct{})}
	if err := s.checkOptionsFile(); err != nil {
		return nil, err
	}
	s, err := openPebble(dir, opts, po, lock, true, false)
	if err != nil {
		return nil, err
	}
	if err := s.checkNetwork(opts.Network, opts.NetworkKey); err != nil {
		s.DB.Close()
		return nil, s.lostWAL(s.unreadable(err))
	}
	if opts.Check != nil {
		if err := opts.Check(s); err != nil {
			s.DB.Close()
			return nil, s.lostWAL(cmp.Or(s.Err(), err)) // a read that found a table corrupt names the file
		}
	}
	return s, nil
}

// openPebble opens Pebble on dir, whose lock the caller holds: read-only,
// or for writing (ErrorIfNotExists unless fresh). A failure is returned as
// the store's *Error.
func openPebble(dir string, opts Options, po *pebble.Options, lock *pebble.Lock, readOnly, fresh bool) (*DB, error) {
	s := &DB{name: opts.Name, dir: dir, fs: po.FS, readOnly: readOnly, failed: make(chan struct{}), writingTables: map[*watchedFile]struct{}{}}
	po = po.Clone()
	po.Lock = lock
	po.ErrorIfNotExists = !fresh
	po.ReadOnly = readOnly
	po.Logger = logger{s, opts.Logger.With("component", "pebble", "store", s.name)}
	po.EventListener = s.events(opts.Logger)
	po.FS = failedFS{po.FS, s}
	err := s.guardOpen(func() (err error) {
		s.DB, err = pebble.Open(dir, po)
		return err
	})
	if err != nil {
		if s.Err() != nil {
			s.removeUnfinished()
		}
		return s, s.unreadable(err)
	}
	return s, nil
}

// isFresh reports whether dir is missing or empty. A LOCK file alone is
// what a creation stopped before Pebble wrote anything leaves behind.
func isFresh(fsys vfs.FS, dir string) (bool, error) {
	names, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "LOCK" })
	return len(names) == 0, nil
}

// checkOptionsFile refuses a store whose newest OPTIONS file does not
// parse, before Pebble reads it: that file holds only the settings Pebble
// last opened the store with, and deleting it alone loses no data, where
// Pebble's own error would look like a corrupt store.
func (s *DB) checkOptionsFile() error {
	desc, err := pebble.Peek(s.dir, s.fs)
	if err != nil || desc.OptionsFilename == "" {
		return nil // Pebble's open reports what is wrong
	}
	b, err := readFile(s.fs, desc.OptionsFilename)
	if err == nil {
		err = new(pebble.Options).Parse(string(b), nil)
	}
	if err != nil {
		return &Error{Store: s.name, Dir: s.dir, Err: fmt.Errorf("bad OPTIONS file %s: %w", desc.OptionsFilename, err),
			Do: "delete that file and start the node again: it holds only Pebble's settings, which are written anew, and none of the store's data"}
	}
	return nil
}

func readFile(fsys vfs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// create writes a new store's first batch: its initial records and the
// stamp, synced.
func (s *DB) create(opts Options) error {
	b := s.NewBatch()
	defer b.Close()
	if opts.Init != nil {
		if err := opts.Init(b); err != nil {
			return err
		}
	}
	if err := b.Set(opts.NetworkKey, opts.Network.encode(), nil); err != nil {
		return err
	}
	return s.Commit(b, pebble.Sync)
}

// unreadable says what it means that Pebble could not open or read a
// store: the disk's fault when the error says so, else the store cannot be
// read as it was written (a table its MANIFEST names is gone, a level out
// of order): it is corrupt.
func (s *DB) unreadable(err error) error {
	if errors.Is(err, pebble.ErrDBDoesNotExist) {
		return &Error{Store: s.name, Dir: s.dir,
			Err: fmt.Errorf("%w: the directory holds files but no Pebble store (its marker.manifest file is missing)", ErrCorrupt),
			Do:  s.resync()}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return s.Corrupt(err) // a file the store's MANIFEST or markers name is gone
	}
	if e := s.errorOf(err); e.Do != "" {
		return e
	}
	return s.Corrupt(err)
}

// Abandoned reports whether the store failed while it could write: it is
// left as it is, its lock held, for the process to exit. Pebble may be
// stuck inside the write that failed, and so may a writer of the store's
// owner, holding the owner's locks: an owner's Close must not wait for them.
func (s *DB) Abandoned() bool { return s.Err() != nil && !s.readOnly }

// Close closes the store, unless it is Abandoned: then it returns its fault.
func (s *DB) Close() error {
	if s.Abandoned() {
		s.removeUnfinished()
		return s.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.DB.Close()
	if s.lock != nil {
		err = errors.Join(err, s.lock.Close())
	}
	return err
}

// Absent reports whether dir, on fsys (nil: vfs.Default), holds no store:
// it is missing, or empty but for a LOCK file. Open creates a store there.
func Absent(fsys vfs.FS, dir string) (bool, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	return isFresh(fsys, dir)
}
