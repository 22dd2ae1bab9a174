package pebblestore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Commit commits b. A batch Pebble could not write is the store's fault:
// Commit returns it, and so does every later Commit.
func (s *DB) Commit(b *pebble.Batch, wo *pebble.WriteOptions) error {
	if err := s.Err(); err != nil {
		return err
	}
	if err := s.guard(func() error { return b.Commit(wo) }); err != nil {
		return s.Fail(err)
	}
	return nil
}

// guard runs f on a goroutine of its own, so that Pebble's Logger.Fatalf,
// which ends the goroutine it is called on (runtime.Goexit), ends that one
// and not the caller's, and turns a panic in f (Pebble panics on a WAL
// write it cannot complete) into the store's fault. It returns once f has
// ended: the caller may then release what f used (a committed batch).
func (s *DB) guard(f func() error) error {
	return s.guarded(f, false)
}

// guardOpen is guard for Pebble's Open, which it leaves as soon as the
// store has a fault, whether or not Open has returned: Pebble retries a
// failed flush at once and for ever, and its Open waits for the flush of
// the write-ahead logs it replayed, so on a disk still full Open never
// returns. Open uses nothing of the caller's that the caller would free.
func (s *DB) guardOpen(f func() error) error {
	return s.guarded(f, true)
}

func (s *DB) guarded(f func() error, leaveOnFault bool) error {
	done := make(chan error, 1)
	go func() {
		returned := false
		defer func() {
			if r := recover(); r != nil {
				done <- s.Fail(panicError(r))
			} else if !returned {
				done <- s.Fail(errors.New("pebble stopped the write")) // after Fatalf: returns its fault
			}
		}()
		err := f()
		returned = true
		done <- err
	}()
	if !leaveOnFault {
		return <-done
	}
	select {
	case err := <-done:
		return err
	case <-s.failed:
		return s.Err()
	}
}

func panicError(r any) error {
	if err, ok := r.(error); ok {
		return err
	}
	return fmt.Errorf("pebble: %v", r)
}

// Fail records err as the store's fault, unless it already has one, and
// returns the fault. The store's own checks call it when what they read
// cannot be what was written.
func (s *DB) Fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fault == nil {
		s.fault = s.errorOf(err)
		close(s.failed)
	}
	return s.fault
}

// Err returns the store's fault, or nil.
func (s *DB) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fault == nil {
		return nil // not a nil *Error in an error
	}
	return s.fault
}

// Failed is closed when the store has a fault (Err).
func (s *DB) Failed() <-chan struct{} { return s.failed }

// events makes Pebble's background errors and corruption reports faults.
// A background error that is not about the disk (a compaction cancelled,
// say) is only logged: Pebble retries that work.
func (s *DB) events(log *slog.Logger) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			if isDiskFull(err) || isCorrupt(err) || isIO(err) {
				s.Fail(err)
				return
			}
			log.Warn("pebble: background error", "store", s.name, "err", err)
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			s.Fail(fmt.Errorf("%s: %w", info.Path, info.Details))
		},
		WriteStallBegin: func(pebble.WriteStallBeginInfo) { s.stalls.begin() },
		WriteStallEnd:   s.stalls.end,
	}
}

func isDiskFull(err error) bool {
	return vfs.IsNoSpaceError(err) || errors.Is(err, syscall.EDQUOT)
}

func isCorrupt(err error) bool { return pebble.IsCorruptionError(err) }

func isIO(err error) bool {
	var pathErr *fs.PathError
	var errno syscall.Errno
	return errors.As(err, &pathErr) || errors.As(err, &errno)
}

// logger sends Pebble's messages to slog, and makes its Fatalf the
// store's fault.
type logger struct {
	s   *DB
	log *slog.Logger
}

func (l logger) Infof(format string, args ...any) { l.log.Debug(fmt.Sprintf(format, args...)) }

func (l logger) Errorf(format string, args ...any) { l.log.Error(fmt.Sprintf(format, args...)) }

// Fatalf must not return: Pebble calls it when it cannot go on (a commit
// or a MANIFEST write failed) and would go on as if it had succeeded. It
// records the fault and ends the calling goroutine, running its deferred
// calls: that is a guarded write's own goroutine (guard), or one of
// Pebble's background goroutines. No stack trace, no exit: the store's
// owner sees Failed and stops.
func (l logger) Fatalf(format string, args ...any) {
	err := fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if cause, ok := a.(error); ok && err.cause == nil {
			err.cause = cause
		}
	}
	l.s.Fail(err)
	runtime.Goexit()
}

// fatalError is Fatalf's message, with its error argument as the cause,
// so the fault can say whether the disk was full.
type fatalError struct {
	msg   string
	cause error
}

func (e fatalError) Error() string { return e.msg }

func (e fatalError) Unwrap() error { return e.cause }

// failedFS is the store's file system, which creates no file once the
// store has a fault: Pebble retries a failed flush for ever, each try
// creating a table, and a try cut short by the process's exit would leave
// an empty one behind.
type failedFS struct {
	vfs.FS
	s *DB
}

func (f failedFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	table := strings.HasSuffix(name, ".sst")
	if table { // a table's creation is one of its writes (tableWrites)
		f.s.tableWrites.RLock()
		defer f.s.tableWrites.RUnlock()
	}
	if err := f.fault(); err != nil {
		return nil, err
	}
	file, err := f.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	w := &watchedFile{File: file, name: name, s: f.s, table: table}
	if table {
		f.s.unfinishedMu.Lock()
		f.s.writingTables[w] = struct{}{}
		f.s.unfinishedMu.Unlock()
	}
	return w, nil
}

// watchedFile notes its name in the store when a write to it fails: the
// file Pebble was writing when the disk filled, which it never finishes.
// A table's writes are also refused once the store has a fault, so that a
// table still empty then stays empty (removeUnfinished).
type watchedFile struct {
	vfs.File
	name  string
	s     *DB
	table bool
}

func (w *watchedFile) Write(p []byte) (n int, err error) {
	err = w.write(func() (err error) { n, err = w.File.Write(p); return err })
	return n, err
}

func (w *watchedFile) WriteAt(p []byte, off int64) (n int, err error) {
	err = w.write(func() (err error) { n, err = w.File.WriteAt(p, off); return err })
	return n, err
}

func (w *watchedFile) Sync() error { return w.write(w.File.Sync) }

func (w *watchedFile) Close() error {
	if w.table {
		w.s.unfinishedMu.Lock()
		delete(w.s.writingTables, w)
		w.s.unfinishedMu.Unlock()
	}
	return w.File.Close()
}

// write runs op, a write to the file, and notes its failure. A table's
// write holds tableWrites shared and is refused once the store has a
// fault.
func (w *watchedFile) write(op func() error) error {
	if w.table {
		w.s.tableWrites.RLock()
		defer w.s.tableWrites.RUnlock()
		if err := (failedFS{s: w.s}).fault(); err != nil {
			return err
		}
	}
	err := op()
	w.note(err)
	return err
}

func (w *watchedFile) note(err error) {
	if err == nil {
		return
	}
	w.s.unfinishedMu.Lock()
	w.s.unfinished = append(w.s.unfinished, w.name)
	w.s.unfinishedMu.Unlock()
	// A write-ahead log written without fsync fails on Pebble's own
	// goroutine, unseen by the commit it carried; Pebble panics only when it
	// next rotates the log, fatally (its deferred unlocks run on a mutex it
	// released). Made the store's fault now, the next Commit is refused
	// before it can rotate.
	if strings.HasSuffix(w.name, ".log") {
		w.s.Fail(fmt.Errorf("writing the write-ahead log %s: %w", filepath.Base(w.name), err))
	}
}

// removeUnfinished removes, once the store has a fault, the empty files
// whose writes failed — a table Pebble began as the disk filled is named
// by no version of the store, and an empty one left behind looks like
// damage to whoever looks next — and the tables Pebble is writing that are
// still empty: their writes are refused from now on, so no version will
// name them either. A table write in flight may be about to fill its
// table: then the tables are left for the next open to delete as obsolete,
// since an abandoned store must not wait on a write that may hang.
func (s *DB) removeUnfinished() {
	s.unfinishedMu.Lock()
	defer s.unfinishedMu.Unlock()
	removeIfEmpty := func(name string) {
		if info, err := s.fs.Stat(name); err == nil && info.Size() == 0 {
			_ = s.fs.Remove(name)
		}
	}
	for _, name := range s.unfinished {
		removeIfEmpty(name)
	}
	s.unfinished = nil
	if s.tableWrites.TryLock() {
		defer s.tableWrites.Unlock()
		for w := range s.writingTables {
			removeIfEmpty(w.name)
		}
	}
}

func (f failedFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := f.fault(); err != nil {
		return nil, err
	}
	return f.FS.ReuseForWrite(oldname, newname, category)
}

// fault is the store's fault, read without its lock: Close holds that lock
// while Pebble's compactions, which create files, finish. The fault is set
// before Failed is closed and never after.
func (f failedFS) fault() error {
	select {
	case <-f.s.failed:
		return f.s.fault
	default:
		return nil
	}
}
