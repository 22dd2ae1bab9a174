package pebblestore

import (
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
	// table flushed as the disk filled): left empty, removed once the
	// store has a fault (removeUnfinished).
	unfinishedMu sync.Mutex
	unfinished   []string
}

// Open opens the store in dir, creating it only if dir does not exist or
// is empty: a directory that holds anything is opened as an existing store
// and must carry a stamp of opts.Network.
func Open(dir string, opts Options) (*DB, error) {
	po := opts.Pebble.Clone()
	if po.FS == nil {
		po.FS = vfs.Default
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &DB{name: opts.Name, dir: dir, fs: po.FS, readOnly: opts.ReadOnly, failed: make(chan struct{})}
	fresh, err := isFresh(po.FS, dir)
	if err != nil {
		return nil, s.errorOf(err)
	}
	if fresh && opts.ReadOnly {
		return nil, &Error{Store: s.name, Dir: dir, Err: errors.New("no store in the directory"),
			Do: "check databasePath in the node's config"}
	}
	if err := po.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, s.errorOf(err)
	}
	if s.lock, err = pebble.LockDirectory(dir, po.FS); err != nil {
		// A lock held elsewhere is the lock call's bare errno; a LOCK file
		// the node may not open is a *fs.PathError, a permission fault.
		var pathErr *fs.PathError
		if !errors.As(err, &pathErr) && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES)) {
			return nil, &Error{Store: s.name, Dir: dir, Err: fmt.Errorf("%w: %w", ErrInUse, err),
				Do: "another process holds its LOCK file: stop the leiosnode that runs on it, or give this one another databasePath"}
		}
		return nil, s.errorOf(err)
	}
	po.Lock = s.lock
	po.ErrorIfNotExists = !fresh
	po.ReadOnly = opts.ReadOnly
	po.Logger = logger{s, opts.Logger.With("component", "pebble", "store", s.name)}
	po.EventListener = s.events(opts.Logger)
	po.FS = failedFS{po.FS, s}
	if !fresh {
		if err := s.checkOptionsFile(); err != nil {
			s.lock.Close()
			return nil, err
		}
	}

	err = s.guardOpen(func() (err error) {
		s.DB, err = pebble.Open(dir, po)
		return err
	})
	if err == nil {
		if fresh {
			err = s.create(opts)
		} else {
			err = s.checkNetwork(opts.Network, opts.NetworkKey)
		}
		if err != nil {
			s.Close()
		}
	} else if s.Err() == nil {
		s.lock.Close()
	} else {
		s.removeUnfinished()
	}
	if err != nil {
		return nil, s.unreadable(err)
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
	return errors.Join(err, s.lock.Close())
}
