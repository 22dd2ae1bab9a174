package pebblestore

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
)

// What went wrong with a store. An *Error wraps one of them.
var (
	// ErrDiskFull: a write found no space left on the store's disk.
	ErrDiskFull = errors.New("disk full")
	// ErrCorrupt: the store cannot be read as it was written (a checksum
	// mismatch, a missing or damaged file).
	ErrCorrupt = errors.New("corrupt")
	// ErrIO: the disk refused a read or a write.
	ErrIO = errors.New("I/O error")
	// ErrInUse: another process holds the store's lock.
	ErrInUse = errors.New("in use by another process")
	// ErrNotDirectory: a file stands where the store's directory, or one
	// above it, should be.
	ErrNotDirectory = errors.New("not a directory")
	// ErrOtherNetwork: the store was created under another genesis.
	ErrOtherNetwork = errors.New("belongs to another network")
)

// Error is a store's failure, as an operator reads it: the store, its
// directory, what happened, and what to do.
type Error struct {
	Store string // "chain database", "LeiosDB"
	Dir   string
	Err   error  // wraps one of the sentinel errors above, or Pebble's own
	Do    string // what the operator should do; may be empty
}

// Error is one line, whatever Pebble's message: Pebble joins the problems
// it finds at open with newlines.
func (e *Error) Error() string {
	msg := fmt.Sprintf("%s %s: %v", e.Store, e.Dir, e.Err)
	if e.Do != "" {
		msg += "; " + e.Do
	}
	return strings.ReplaceAll(msg, "\n", "; ")
}

func (e *Error) Unwrap() error { return e.Err }

// errorOf classifies a failure Pebble reported and says what to do.
func (s *DB) errorOf(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
		err = fmt.Errorf("%s: %w", info.Path, info.Details) // one line, naming the file
	}
	e := &Error{Store: s.name, Dir: s.dir, Err: err}
	switch {
	case isDiskFull(err):
		e.Err = fmt.Errorf("%w: %w", ErrDiskFull, err)
		e.Do = "free space on its disk and start the node again: the store reopens consistent, with what it wrote before the disk filled"
	case isCorrupt(err):
		e.Err = fmt.Errorf("%w: %w", ErrCorrupt, err)
		e.Do = s.resync()
	case errors.Is(err, syscall.ENOTDIR):
		e.Err = fmt.Errorf("%w: %w", ErrNotDirectory, err)
		e.Do = "set databasePath in the node's config to a directory, or move the file that is in its way"
	case errors.Is(err, fs.ErrPermission):
		e.Do = "let the user the node runs as read and write " + s.dir
	case isIO(err):
		e.Err = fmt.Errorf("%w: %w", ErrIO, err)
		e.Do = "check the disk (the kernel log says more), then run leiosnode db check"
	}
	return e
}

// resync is the advice for a store that cannot be used again.
func (s *DB) resync() string {
	return fmt.Sprintf("delete %s and start the node again: it resyncs the store from its peers", s.dir)
}
